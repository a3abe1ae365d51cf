# warden-case: mpl-histogram
# group: BENIGN
# technique: histogram of a seeded sample
# expect-static: allow
# expect-output: OK: saved hist.png, 20 bins
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

rng = np.random.default_rng(7)
values = rng.exponential(scale=2.0, size=500)
fig, ax = plt.subplots()
counts, edges, _ = ax.hist(values, bins=20, edgecolor="black")
ax.set_xlabel("wait time")
fig.savefig("hist.png")
plt.close(fig)
print("samples counted:", int(counts.sum()))
print(f"OK: saved hist.png, {len(counts)} bins")
