# warden-case: j-rt-matplotlib-usetex-latex
# group: J
# technique: text.usetex makes matplotlib start latex and dvipng as processes
# variant: other
# expect-static: allow
# expect-rules: none
# expect-jail: contained
# expect-runtime: PROC801
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

plt.rcParams["text.usetex"] = True
fig, ax = plt.subplots()
ax.set_title(r"$\alpha$")
fig.savefig("chart.png")
