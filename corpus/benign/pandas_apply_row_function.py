# warden-case: pandas-apply-row-function
# group: BENIGN
# technique: apply a Python function across rows
# expect-static: allow
# expect-output: OK: grades ['B', 'A', 'C']
import pandas as pd


def grade(row):
    avg = (row["math"] + row["english"]) / 2
    if avg >= 85:
        return "A"
    if avg >= 70:
        return "B"
    return "C"


df = pd.DataFrame({"math": [80, 95, 60], "english": [75, 90, 55]})
df["grade"] = df.apply(grade, axis=1)
print(df)
print(f"OK: grades {df['grade'].tolist()}")
