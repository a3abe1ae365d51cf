# warden-case: i-rt-np-fromfile-host
# group: I
# technique: numpy.fromfile reads a host file through a computed path
# variant: computed-string
# expect-static: allow
# expect-rules: none
# expect-runtime: FILE701
# expect-jail: canary-unread
import numpy as np
path = "/".join(["", "root", "warden-canary"])
print(np.fromfile(path, dtype=np.uint8).tobytes())
