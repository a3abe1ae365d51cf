# warden-case: pandas-clip-outliers
# group: BENIGN
# technique: clip values to quantile range
# expect-static: allow
# expect-output: OK: clipped max 10
import pandas as pd

values = pd.Series([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 500])
upper = 10
clipped = values.clip(lower=0, upper=upper)
print("median:", float(values.median()))
print(f"OK: clipped max {int(clipped.max())}")
