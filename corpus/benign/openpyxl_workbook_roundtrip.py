# warden-case: openpyxl-workbook-roundtrip
# group: BENIGN
# technique: openpyxl workbook written, then read back with pandas read_excel
# expect-static: allow
# expect-output: OK: excel rows 3, total 35
import openpyxl
import pandas as pd

book = openpyxl.Workbook()
sheet = book.active
sheet.title = "sales"
sheet.append(["region", "amount"])
for row in [("north", 10), ("south", 20), ("east", 5)]:
    sheet.append(row)
book.save("sales.xlsx")
df = pd.read_excel("sales.xlsx", sheet_name="sales", engine="openpyxl")
print(f"OK: excel rows {len(df)}, total {df['amount'].sum()}")
