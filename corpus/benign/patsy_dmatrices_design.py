# warden-case: patsy-dmatrices-design
# group: BENIGN
# technique: patsy dmatrices builds design matrices from a formula
# expect-static: allow
# expect-output: OK: design columns ['Intercept', 'C(g)[T.b]', 'x', 'I(x ** 2)']
import pandas as pd
from patsy import dmatrices

df = pd.DataFrame({"y": [1.0, 2.0, 3.0, 4.0], "x": [0.5, 1.5, 2.5, 3.5], "g": ["a", "b", "a", "b"]})
y, X = dmatrices("y ~ x + C(g) + I(x ** 2)", df, return_type="dataframe")
print(f"OK: design columns {list(X.columns)}")
