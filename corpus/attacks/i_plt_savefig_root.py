# warden-case: i-plt-savefig-root
# group: I
# technique: plt.savefig into /root
# variant: plain
# expect-static: deny
# expect-rules: FILE702
# expect-jail: no-path /root/warden-escape*
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

plt.plot([1, 2, 3])
plt.savefig("/root/warden-escape.png")
