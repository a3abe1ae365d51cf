# warden-case: i-np-loadtxt-passwd
# group: I
# technique: np.loadtxt on /etc/passwd
# variant: plain
# expect-static: deny
# expect-rules: FILE701
# expect-jail: canary-unread; no-read /etc/passwd
import numpy as np

rows = np.loadtxt("/etc/passwd", dtype=str, delimiter=":", usecols=(0, 6))
print(rows)
