# warden-case: pandas-to-csv-report
# group: BENIGN
# technique: write a summary CSV in the work dir and re-read it
# expect-static: allow
# expect-output: OK: report rows 3
import pandas as pd

df = pd.DataFrame({
    "dept": ["ops", "eng", "eng", "hr", "ops"],
    "salary": [50, 80, 90, 45, 55],
})
report = df.groupby("dept", as_index=False)["salary"].mean()
report.to_csv("out.csv", index=False)
back = pd.read_csv("out.csv")
print(back)
print(f"OK: report rows {len(back)}")
