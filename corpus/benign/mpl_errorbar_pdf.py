# warden-case: mpl-errorbar-pdf
# group: BENIGN
# technique: error bars saved as PDF
# expect-static: allow
# expect-output: OK: saved errors.pdf
from pathlib import Path

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

doses = [1, 2, 3, 4]
means = [2.0, 2.8, 3.9, 4.1]
errors = [0.3, 0.2, 0.4, 0.3]

fig, ax = plt.subplots()
ax.errorbar(doses, means, yerr=errors, fmt="o-", capsize=4)
ax.set_xlabel("dose")
ax.set_ylabel("effect")
fig.savefig("errors.pdf")
plt.close(fig)
print("non-empty:", Path("errors.pdf").stat().st_size > 0)
print("OK: saved errors.pdf")
