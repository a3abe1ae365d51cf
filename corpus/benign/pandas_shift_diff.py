# warden-case: pandas-shift-diff
# group: BENIGN
# technique: shift and diff for day-over-day change
# expect-static: allow
# expect-output: OK: biggest jump on d4 (+9)
import pandas as pd

visits = pd.Series([5, 7, 6, 15, 14], index=["d1", "d2", "d3", "d4", "d5"])
frame = pd.DataFrame({"visits": visits, "previous": visits.shift(1), "delta": visits.diff()})
print(frame)
day = frame["delta"].idxmax()
print(f"OK: biggest jump on {day} (+{int(frame['delta'].max())})")
