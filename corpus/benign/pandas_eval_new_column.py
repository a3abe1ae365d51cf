# warden-case: pandas-eval-new-column
# group: BENIGN
# technique: DataFrame.eval with column arithmetic only
# expect-static: allow
# expect-output: OK: order total 30.0
import pandas as pd

df = pd.DataFrame({"price": [2.0, 3.5, 1.5], "qty": [4, 2, 10]})
df = df.eval("total = price * qty")
print(df)
print(f"OK: order total {df['total'].sum():.1f}")
