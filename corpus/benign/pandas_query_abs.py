# warden-case: pandas-query-abs
# group: BENIGN
# technique: DataFrame.query with abs() of a column
# expect-static: allow
# expect-output: OK: 2 large moves
import pandas as pd

df = pd.DataFrame({"change": [0.5, -3.0, 1.0, 4.5]})
big = df.query("abs(change) > 2")
print(f"OK: {len(big)} large moves")
