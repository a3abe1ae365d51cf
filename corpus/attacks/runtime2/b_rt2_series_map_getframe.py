# warden-case: b-rt2-series-map-getframe
# group: B
# technique: Series.map calls sys._getframe from pandas frames, then walks f_back to a library frame's globals
# variant: value-passing
# expect-static: deny
# expect-rules: IMP101 ATTR302 DYN403
# expect-jail: contained
# expect-runtime: ATTR303
import sys

import pandas as pd

frame = pd.Series([1]).map(sys._getframe)[0]
print(sorted(frame.f_back.f_globals)[:5])
