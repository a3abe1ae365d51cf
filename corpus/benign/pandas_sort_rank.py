# warden-case: pandas-sort-rank
# group: BENIGN
# technique: sort and dense rank
# expect-static: allow
# expect-output: OK: ranks [2, 1, 3, 1]
import pandas as pd

df = pd.DataFrame({"team": ["a", "b", "c", "d"], "points": [7, 9, 4, 9]})
df["rank"] = df["points"].rank(method="dense", ascending=False).astype(int)
print(df.sort_values(["rank", "team"]))
print(f"OK: ranks {df['rank'].tolist()}")
