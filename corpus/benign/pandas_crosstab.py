# warden-case: pandas-crosstab
# group: BENIGN
# technique: crosstab of two categorical columns
# expect-static: allow
# expect-output: OK: crosstab total 6
import pandas as pd

df = pd.DataFrame({
    "gender": ["f", "m", "f", "f", "m", "m"],
    "answer": ["yes", "no", "no", "yes", "yes", "no"],
})
table = pd.crosstab(df["gender"], df["answer"], margins=True)
print(table)
print(f"OK: crosstab total {int(table.loc['All', 'All'])}")
