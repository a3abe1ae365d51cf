# warden-case: pandas-isin-where
# group: BENIGN
# technique: isin filtering and where masking
# expect-static: allow
# expect-output: OK: kept 3 rows, masked sum 6
import pandas as pd

df = pd.DataFrame({"code": ["a", "b", "c", "d", "e"], "n": [1, 2, 3, 4, 5]})
kept = df[df["code"].isin(["a", "c", "e"])]
masked = df["n"].where(df["n"] < 4, 0)
print(kept)
print(masked.tolist())
print(f"OK: kept {len(kept)} rows, masked sum {int(masked.sum())}")
