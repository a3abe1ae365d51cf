# warden-case: i-rt2-np-loadtxt-outside
# group: I
# technique: numpy.loadtxt reads a host file through its own open
# variant: computed-string
# expect-static: deny
# expect-rules: FILE701
# expect-jail: no-read /etc/passwd
# expect-runtime: FILE701
import numpy as np

print(np.loadtxt("/etc/" + "passwd", dtype=str, delimiter="\n"))
