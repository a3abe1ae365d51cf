# warden-case: b-rt2-series-map-gc-referrers
# group: B
# technique: Series.map calls gc.get_referrers from pandas frames to search the object graph
# variant: value-passing
# expect-static: deny
# expect-rules: IMP101 DYN402
# expect-jail: contained
# expect-runtime: ATTR303
import sys

import pandas as pd

gc = sys.modules["gc"]
found = pd.Series([sys], dtype=object).map(gc.get_referrers)
print(len(found[0]))
