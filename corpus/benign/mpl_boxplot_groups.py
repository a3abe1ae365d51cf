# warden-case: mpl-boxplot-groups
# group: BENIGN
# technique: boxplot comparing groups
# expect-static: allow
# expect-output: OK: saved box.png for 3 groups
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

groups = {
    "control": [4.1, 3.9, 4.4, 4.0, 4.2],
    "dose_a": [4.8, 5.1, 4.9, 5.3, 5.0],
    "dose_b": [5.9, 6.2, 6.0, 5.7, 6.1],
}
fig, ax = plt.subplots()
ax.boxplot(list(groups.values()))
ax.set_xticks([1, 2, 3])
ax.set_xticklabels(list(groups.keys()))
ax.set_ylabel("response")
fig.savefig("box.png")
plt.close(fig)
print(f"OK: saved box.png for {len(groups)} groups")
