# warden-case: pandas-read-csv-roundtrip
# group: BENIGN
# technique: write data.csv with csv, read it with pandas
# expect-static: allow
# expect-output: OK: read 4 rows, total qty 26
import csv

import pandas as pd

rows = [
    {"item": "apple", "qty": 5, "price": 0.5},
    {"item": "pear", "qty": 3, "price": 0.75},
    {"item": "plum", "qty": 12, "price": 0.2},
    {"item": "fig", "qty": 6, "price": 1.1},
]
with open("data.csv", "w", newline="") as fh:
    writer = csv.DictWriter(fh, fieldnames=["item", "qty", "price"])
    writer.writeheader()
    writer.writerows(rows)

df = pd.read_csv("data.csv")
df["value"] = df["qty"] * df["price"]
print(df.sort_values("value", ascending=False).to_string(index=False))
print(f"OK: read {len(df)} rows, total qty {int(df['qty'].sum())}")
