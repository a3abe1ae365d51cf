# warden-case: i-rt2-savefig-outside
# group: I
# technique: matplotlib savefig to a path outside the write roots
# variant: computed-string
# expect-static: deny
# expect-rules: FILE702
# expect-jail: no-path /usr/warden-escape*
# expect-runtime: FILE702
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

plt.plot([1, 2])
plt.savefig("/usr/" + "warden-escape-rt2.png")
