# warden-case: jail-usr-read-numpy-fromfile
# group: JAIL
# technique: numpy.fromfile reads a host file under /usr that no library needs (numpy's C code opens it); only Landlock's read roots hold it
# variant: computed-string
# expect-static: allow
# expect-rules: none
# expect-jail: no-read /usr/lib/os-release
import numpy as np

path = "/".join(["", "usr", "lib", "os-release"])
print(np.fromfile(path, dtype=np.uint8).tobytes().decode())
