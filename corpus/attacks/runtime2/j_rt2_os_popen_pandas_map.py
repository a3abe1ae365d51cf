# warden-case: j-rt2-os-popen-pandas-map
# group: J
# technique: Series.map with os.popen from pandas' frames
# variant: value-passing
# expect-static: deny
# expect-rules: IMP101 REX501
# expect-jail: contained
# expect-runtime: PROC801
import os
import pandas as pd

print(pd.Series(["id"]).map(os.popen).map(lambda f: f.read()).tolist())
