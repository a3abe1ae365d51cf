# warden-case: pandas-resample-weekly
# group: BENIGN
# technique: daily series resampled to weekly sums
# expect-static: allow
# expect-output: OK: weekly sums [28, 77]
import pandas as pd

idx = pd.date_range("2024-01-01", periods=14, freq="D")
daily = pd.Series(range(1, 15), index=idx)
weekly = daily.resample("W").sum()
print(weekly)
print(f"OK: weekly sums {[int(v) for v in weekly]}")
