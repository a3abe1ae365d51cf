# warden-case: getattr-series-stats-loop
# group: BENIGN
# technique: getattr(series, name)() over a list of method names
# expect-static: allow
# expect-output: OK: mean=2.5 median=2.5 max=4
import pandas as pd

s = pd.Series([1, 2, 3, 4])
parts = []
for name in ["mean", "median", "max"]:
    parts.append(f"{name}={getattr(s, name)()}")
print(f"OK: {' '.join(parts)}")
