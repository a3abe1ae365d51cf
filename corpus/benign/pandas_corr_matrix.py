# warden-case: pandas-corr-matrix
# group: BENIGN
# technique: correlation matrix
# expect-static: allow
# expect-output: OK: corr x-y 1.00, x-z -1.00
import pandas as pd

df = pd.DataFrame({"x": [1, 2, 3, 4, 5], "y": [2, 4, 6, 8, 10], "z": [5, 4, 3, 2, 1]})
corr = df.corr()
print(corr.round(3))
print(f"OK: corr x-y {corr.loc['x', 'y']:.2f}, x-z {corr.loc['x', 'z']:.2f}")
