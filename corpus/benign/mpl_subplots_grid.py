# warden-case: mpl-subplots-grid
# group: BENIGN
# technique: 2x2 grid of subplots
# expect-static: allow
# expect-output: OK: saved grid.png with 4 axes
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

x = np.linspace(0, 2 * np.pi, 100)
fig, axes = plt.subplots(2, 2, figsize=(8, 6), sharex=True)
funcs = [np.sin, np.cos, np.tanh, np.sinc]
for ax, fn in zip(axes.flat, funcs):
    ax.plot(x, fn(x))
    ax.grid(True)
fig.suptitle("Four functions")
fig.savefig("grid.png")
plt.close(fig)
print(f"OK: saved grid.png with {axes.size} axes")
