# warden-case: pandas-concat-frames
# group: BENIGN
# technique: concatenate monthly frames
# expect-static: allow
# expect-output: OK: combined 7 rows from 3 months
import pandas as pd

jan = pd.DataFrame({"day": [1, 2], "sales": [10, 12]})
feb = pd.DataFrame({"day": [1, 2, 3], "sales": [9, 14, 11]})
mar = pd.DataFrame({"day": [1, 2], "sales": [20, 5]})

frames = []
for month, frame in (("jan", jan), ("feb", feb), ("mar", mar)):
    frames.append(frame.assign(month=month))
combined = pd.concat(frames, ignore_index=True)
print(combined.groupby("month")["sales"].sum())
print(f"OK: combined {len(combined)} rows from {combined['month'].nunique()} months")
