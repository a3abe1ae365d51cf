# warden-case: b-rt2-dataframe-apply-settrace
# group: B
# technique: DataFrame.apply installs a trace function through sys.settrace from pandas frames
# variant: value-passing
# expect-static: deny
# expect-rules: ATTR303 IMP101 DYN403
# expect-jail: contained
# expect-runtime: ATTR303
import sys

import pandas as pd


def tracer(frame, event, arg):
    print(frame.f_globals.get("__name__"))
    return tracer


pd.Series([tracer], dtype=object).apply(sys.settrace)
print(sum(range(3)))
