# warden-case: pandas-map-replace
# group: BENIGN
# technique: map codes to labels
# expect-static: allow
# expect-output: OK: labels ['low', 'high', 'mid', 'low']
import pandas as pd

levels = pd.Series([1, 3, 2, 1])
labels = levels.map({1: "low", 2: "mid", 3: "high"})
fixed = pd.Series(["N/A", "5", "7"]).replace("N/A", "0").astype(int)
print(labels.tolist(), fixed.tolist())
print(f"OK: labels {labels.tolist()}")
