# warden-case: pandas-pivot-table-regions
# group: BENIGN
# technique: pivot_table with fill_value
# expect-static: allow
# expect-output: OK: pivot shape (3, 2)
import pandas as pd

sales = pd.DataFrame({
    "region": ["N", "N", "S", "S", "E", "E", "N"],
    "quarter": ["Q1", "Q2", "Q1", "Q2", "Q1", "Q1", "Q1"],
    "amount": [100, 150, 80, 90, 60, 40, 20],
})
pivot = sales.pivot_table(index="region", columns="quarter", values="amount",
                          aggfunc="sum", fill_value=0)
print(pivot)
print("Q1 total:", int(pivot["Q1"].sum()))
print(f"OK: pivot shape {pivot.shape}")
