# warden-case: j-rt2-series-apply-os-system
# group: J
# technique: Series.apply hands each cell to os.system from a pandas frame
# variant: value-passing
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained
# expect-runtime: PROC801
import os
import pandas as pd

print(pd.Series(["id"]).apply(os.system).tolist())
