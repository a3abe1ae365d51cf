# warden-case: e-rt2-pd-apply-eval
# group: E
# technique: DataFrame.apply with eval evaluates strings from pandas' frames
# variant: value-passing
# expect-static: deny
# expect-rules: DYN401
# expect-jail: contained
# expect-runtime: DYN401
import pandas as pd

print(pd.Series(["1 + 1"]).apply(eval).tolist())
