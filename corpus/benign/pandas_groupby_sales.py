# warden-case: pandas-groupby-sales
# group: BENIGN
# technique: groupby region and sum revenue
# expect-static: allow
# expect-output: OK: total revenue 120.50
import pandas as pd

df = pd.DataFrame({
    "region": ["North", "South", "North", "East", "South", "East", "North"],
    "product": ["A", "A", "B", "B", "A", "A", "B"],
    "units": [10, 5, 7, 3, 8, 6, 2],
    "price": [2.5, 2.5, 4.0, 4.0, 2.5, 2.5, 4.0],
})
df["revenue"] = df["units"] * df["price"]

by_region = df.groupby("region")["revenue"].sum().sort_values(ascending=False)
for region, value in by_region.items():
    print(f"{region}: {value:.2f}")

top = by_region.index[0]
print("top region:", top)
total = df["revenue"].sum()
print(f"OK: total revenue {total:.2f}")
