# warden-case: mpl-line-chart
# group: BENIGN
# technique: line chart saved to the work dir
# expect-static: allow
# expect-output: OK: saved chart.png
import os.path

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

months = ["Jan", "Feb", "Mar", "Apr", "May"]
revenue = [12, 15, 11, 18, 21]

fig, ax = plt.subplots(figsize=(6, 4))
ax.plot(months, revenue, marker="o", label="revenue")
ax.set_title("Monthly revenue")
ax.set_ylabel("kEUR")
ax.legend()
fig.tight_layout()
fig.savefig("chart.png", dpi=80)
plt.close(fig)

print("file exists:", os.path.exists("chart.png"))
print("OK: saved chart.png")
