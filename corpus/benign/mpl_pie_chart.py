# warden-case: mpl-pie-chart
# group: BENIGN
# technique: pie chart of market share
# expect-static: allow
# expect-output: OK: saved pie.png
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

shares = {"alpha": 45, "beta": 30, "gamma": 15, "other": 10}
fig, ax = plt.subplots()
ax.pie(list(shares.values()), labels=list(shares.keys()), autopct="%1.0f%%", startangle=90)
ax.axis("equal")
fig.savefig("pie.png")
plt.close(fig)
print("total share:", sum(shares.values()))
print("OK: saved pie.png")
