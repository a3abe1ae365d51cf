# warden-case: pandas-query-at-subscript
# group: BENIGN
# technique: DataFrame.query with @limits['low'] from a dictionary
# expect-static: allow
# expect-output: OK: 2 rows between 10 and 30
import pandas as pd

limits = {"low": 10, "high": 30}
df = pd.DataFrame({"temp": [5, 12, 25, 31]})
picked = df.query("temp >= @limits['low'] and temp <= @limits['high']")
print(f"OK: {len(picked)} rows between {limits['low']} and {limits['high']}")
