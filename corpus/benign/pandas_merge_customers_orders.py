# warden-case: pandas-merge-customers-orders
# group: BENIGN
# technique: inner merge of two frames and aggregate
# expect-static: allow
# expect-output: OK: merged rows 5, top customer Ana
import pandas as pd

customers = pd.DataFrame({"customer_id": [1, 2, 3], "name": ["Ana", "Ben", "Cy"]})
orders = pd.DataFrame({
    "order_id": [10, 11, 12, 13, 14, 15],
    "customer_id": [1, 1, 2, 3, 1, 4],
    "total": [30.0, 12.5, 40.0, 8.0, 22.0, 99.0],
})

merged = orders.merge(customers, on="customer_id", how="inner")
spend = merged.groupby("name")["total"].sum().sort_values(ascending=False)
print(spend)
print(f"OK: merged rows {len(merged)}, top customer {spend.index[0]}")
