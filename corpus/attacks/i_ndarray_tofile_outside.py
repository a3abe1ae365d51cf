# warden-case: i-ndarray-tofile-outside
# group: I
# technique: ndarray.tofile to a host path
# variant: plain
# expect-static: deny
# expect-rules: FILE702
# expect-jail: no-path /etc/warden-escape*
import numpy as np

np.arange(16, dtype=np.uint8).tofile("/etc/warden-escape.bin")
