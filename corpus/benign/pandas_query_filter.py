# warden-case: pandas-query-filter
# group: BENIGN
# technique: DataFrame.query with plain column comparisons
# expect-static: allow
# expect-output: OK: 2 candidates
import pandas as pd

df = pd.DataFrame({
    "name": ["a", "b", "c", "d", "e"],
    "age": [25, 45, 31, 38, 52],
    "score": [88, 92, 65, 75, 99],
})
picked = df.query("score > 70 and age < 40")
print(picked)
print(f"OK: {len(picked)} candidates")
