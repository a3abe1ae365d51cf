# warden-case: pandas-eval-log-exp
# group: BENIGN
# technique: DataFrame.eval with log and exp round trip
# expect-static: allow
# expect-output: OK: round trip matches
import numpy as np
import pandas as pd

df = pd.DataFrame({"v": [1.0, 2.0, 10.0]})
out = df.eval("back = exp(log(v))")
assert np.allclose(out["back"], df["v"])
print("OK: round trip matches")
