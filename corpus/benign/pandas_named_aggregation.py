# warden-case: pandas-named-aggregation
# group: BENIGN
# technique: groupby with named aggregations
# expect-static: allow
# expect-output: OK: team a total 9, max 5
import pandas as pd

df = pd.DataFrame({"team": ["a", "a", "b", "a", "b"], "score": [3, 5, 2, 1, 8]})
stats = df.groupby("team").agg(total=("score", "sum"), best=("score", "max"), n=("score", "size"))
print(stats)
print(f"OK: team a total {int(stats.loc['a', 'total'])}, max {int(stats.loc['a', 'best'])}")
