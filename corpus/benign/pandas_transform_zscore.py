# warden-case: pandas-transform-zscore
# group: BENIGN
# technique: groupby transform for per-group centering
# expect-static: allow
# expect-output: OK: centered sums [0.0, 0.0]
import pandas as pd

df = pd.DataFrame({"g": ["a", "a", "a", "b", "b"], "v": [1.0, 2.0, 3.0, 10.0, 20.0]})
df["centered"] = df["v"] - df.groupby("g")["v"].transform("mean")
print(df)
sums = df.groupby("g")["centered"].sum()
print(f"OK: centered sums {[round(abs(float(s)), 6) for s in sums]}")
