# warden-case: j-rt2-matplotlib-animation-writer
# group: J
# technique: a matplotlib animation writer starts ffmpeg as a process
# variant: other
# expect-static: allow
# expect-rules: none
# expect-jail: contained
# expect-runtime: PROC801
import matplotlib

matplotlib.use("Agg")
import matplotlib.animation as animation
import matplotlib.pyplot as plt

fig, ax = plt.subplots()
line, = ax.plot([0, 1], [0, 1])
anim = animation.FuncAnimation(fig, lambda i: (line,), frames=2)
anim.save("warden.mp4", writer=animation.FFMpegWriter(fps=1))
