# warden-case: d-rt2-series-map-import-module
# group: D
# technique: Series.map with importlib.import_module imports a denied module from pandas' frames
# variant: value-passing
# expect-static: deny
# expect-rules: IMP101 DYN402
# expect-jail: contained
# expect-runtime: IMP101
import sys
import pandas as pd

importer = sys.modules["importlib"].import_module
print(pd.Series(["ftplib"]).map(importer))
