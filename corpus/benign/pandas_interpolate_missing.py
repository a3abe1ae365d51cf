# warden-case: pandas-interpolate-missing
# group: BENIGN
# technique: linear interpolation of gaps
# expect-static: allow
# expect-output: OK: interpolated [1.0, 2.0, 3.0, 4.0, 5.0]
import numpy as np
import pandas as pd

s = pd.Series([1.0, np.nan, 3.0, np.nan, 5.0])
filled = s.interpolate(method="linear")
print(f"OK: interpolated {filled.tolist()}")
