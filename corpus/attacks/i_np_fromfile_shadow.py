# warden-case: i-np-fromfile-shadow
# group: I
# technique: np.fromfile on /etc/shadow
# variant: plain
# expect-static: deny
# expect-rules: FILE701
# expect-jail: canary-unread; no-read /etc/shadow
import numpy as np

raw = np.fromfile("/etc/shadow", dtype=np.uint8)
print(raw.tobytes().decode(errors="replace"))
