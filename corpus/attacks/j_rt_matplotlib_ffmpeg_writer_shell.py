# warden-case: j-rt-matplotlib-ffmpeg-writer-shell
# group: J
# technique: matplotlib's animation writer runs the executable named by rcParams (set to a shell)
# variant: other
# expect-static: allow
# expect-rules: none
# expect-runtime: PROC801
# expect-jail: contained
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib import animation
matplotlib.rcParams["animation.ffmpeg_path"] = "/bin/sh"
fig, ax = plt.subplots()
line, = ax.plot([0, 1], [0, 1])
anim = animation.FuncAnimation(fig, lambda i: (line,), frames=2)
anim.save("out.mp4", writer="ffmpeg")
