# warden-case: h-rt-ctypes-from-numpy-module
# group: H
# technique: the ctypes module a numpy submodule imported, then CDLL
# variant: value-passing
# expect-static: deny
# expect-rules: ATTR302 REX501
# expect-jail: contained
# expect-runtime: NAT803
import numpy as np

ct = np.core._internal.ctypes
libc = ct.CDLL(None)
print(libc.getpid())
