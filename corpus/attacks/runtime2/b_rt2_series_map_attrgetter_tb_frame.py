# warden-case: b-rt2-series-map-attrgetter-tb-frame
# group: B
# technique: Series.map with operator.attrgetter("tb_frame") reads a traceback's frame from pandas' frames
# variant: value-passing
# expect-static: deny
# expect-rules: ATTR303
# expect-jail: contained
# expect-runtime: ATTR303
import operator

import pandas as pd

try:
    1 / 0
except ZeroDivisionError as err:
    tb = err.__traceback__
frames = pd.Series([tb], dtype=object).map(operator.attrgetter("tb_frame"))
print(frames[0].f_globals.get("__name__"))
