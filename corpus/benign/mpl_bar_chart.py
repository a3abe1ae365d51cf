# warden-case: mpl-bar-chart
# group: BENIGN
# technique: bar chart with labels
# expect-static: allow
# expect-output: OK: saved bars.png with 4 bars
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

teams = ["red", "blue", "green", "gold"]
wins = [7, 4, 9, 2]

fig, ax = plt.subplots()
bars = ax.bar(teams, wins, color="steelblue")
for bar, value in zip(bars, wins):
    ax.annotate(str(value), (bar.get_x() + bar.get_width() / 2, value), ha="center", va="bottom")
ax.set_title("Wins per team")
fig.savefig("bars.png")
plt.close(fig)
print(f"OK: saved bars.png with {len(bars)} bars")
