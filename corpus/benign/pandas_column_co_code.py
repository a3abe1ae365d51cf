# warden-case: pandas-column-co-code
# group: BENIGN
# technique: a column named co_code (a company code) used as data
# expect-static: allow
# expect-output: OK: 3 companies, total 60
import pandas as pd

df = pd.DataFrame({"co_code": ["A1", "B2", "C3"], "amount": [10, 20, 30]})
totals = df.groupby("co_code")["amount"].sum()
print(f"OK: {df['co_code'].nunique()} companies, total {totals.sum()}")
