# warden-case: i-np-save-usr-lib
# group: I
# technique: np.save into /usr/lib
# variant: plain
# expect-static: deny
# expect-rules: FILE702
# expect-jail: no-path /usr/lib/warden-escape*
import numpy as np

np.save("/usr/lib/warden-escape.npy", np.arange(10))
