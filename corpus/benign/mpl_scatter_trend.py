# warden-case: mpl-scatter-trend
# group: BENIGN
# technique: scatter plot with a fitted trend line
# expect-static: allow
# expect-output: OK: saved scatter.png
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

rng = np.random.default_rng(1)
x = np.linspace(0, 10, 40)
y = 1.5 * x + rng.normal(0, 1, x.size)
slope, intercept = np.polyfit(x, y, 1)

plt.figure(figsize=(5, 4))
plt.scatter(x, y, s=12, alpha=0.7)
plt.plot(x, slope * x + intercept, color="red")
plt.xlabel("x")
plt.ylabel("y")
plt.savefig("scatter.png")
plt.close()
print("slope positive:", slope > 0)
print("OK: saved scatter.png")
