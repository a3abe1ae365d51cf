# warden-case: pandas-cut-bins
# group: BENIGN
# technique: bin ages with pd.cut
# expect-static: allow
# expect-output: OK: bins [2, 3, 1]
import pandas as pd

ages = pd.Series([5, 17, 22, 35, 41, 67])
groups = pd.cut(ages, bins=[0, 18, 50, 120], labels=["child", "adult", "senior"])
counts = groups.value_counts().sort_index()
print(counts)
print(f"OK: bins {[int(c) for c in counts]}")
