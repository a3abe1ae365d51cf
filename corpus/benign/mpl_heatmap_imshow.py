# warden-case: mpl-heatmap-imshow
# group: BENIGN
# technique: correlation heatmap with imshow
# expect-static: allow
# expect-output: OK: saved heatmap.png (3x3)
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

rng = np.random.default_rng(3)
data = rng.normal(size=(50, 3))
data[:, 1] += data[:, 0]
corr = np.corrcoef(data, rowvar=False)

fig, ax = plt.subplots()
im = ax.imshow(corr, cmap="coolwarm", vmin=-1, vmax=1)
fig.colorbar(im, ax=ax)
for i in range(3):
    for j in range(3):
        ax.text(j, i, f"{corr[i, j]:.2f}", ha="center", va="center")
fig.savefig("heatmap.png")
plt.close(fig)
print(f"OK: saved heatmap.png ({corr.shape[0]}x{corr.shape[1]})")
