# warden-case: pandas-describe-summary
# group: BENIGN
# technique: describe numeric columns
# expect-static: allow
# expect-output: OK: described 6 rows, mean height 170.0
import pandas as pd

people = pd.DataFrame({
    "height": [160, 165, 170, 170, 175, 180],
    "weight": [55, 60, 68, 70, 74, 81],
})
summary = people.describe()
print(summary.round(2))
count = int(summary.loc["count", "height"])
mean_h = summary.loc["mean", "height"]
print(f"OK: described {count} rows, mean height {mean_h:.1f}")
