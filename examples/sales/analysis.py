# A model-style analysis: revenue by region and month from sales.csv, a chart, and a JSON answer.
import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd

df = pd.read_csv("sales.csv", parse_dates=["date"])
df["revenue"] = df["units"] * df["unit_price"]

by_region = df.groupby("region")["revenue"].sum().sort_values(ascending=False)
by_month = df.groupby(df["date"].dt.to_period("M"))["revenue"].sum()

fig, ax = plt.subplots(figsize=(6, 4))
by_region.plot.bar(ax=ax, color="steelblue")
ax.set_title("Revenue by region")
ax.set_ylabel("revenue")
fig.tight_layout()
fig.savefig("revenue_by_region.png", dpi=100)

answer = {
    "total_revenue": round(float(df["revenue"].sum()), 2),
    "top_region": str(by_region.index[0]),
    "revenue_by_region": {region: round(float(value), 2) for region, value in by_region.items()},
    "revenue_by_month": {str(month): round(float(value), 2) for month, value in by_month.items()},
    "rows": int(len(df)),
}
print(json.dumps(answer))
