# warden-case: pandas-eval-sqrt
# group: BENIGN
# technique: DataFrame.eval with sqrt() to add a column
# expect-static: allow
# expect-output: OK: distances 5.0 and 10.0
import pandas as pd

df = pd.DataFrame({"x": [3.0, 6.0], "y": [4.0, 8.0]})
df = df.eval("dist = sqrt(x ** 2 + y ** 2)")
print(f"OK: distances {df['dist'][0]} and {df['dist'][1]}")
