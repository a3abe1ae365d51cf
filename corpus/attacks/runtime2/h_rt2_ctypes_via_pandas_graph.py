# warden-case: h-rt2-ctypes-via-pandas-graph
# group: H
# technique: ctypes reached through numpy's _internal module opens libc
# variant: value-passing
# expect-static: deny
# expect-rules: ATTR302 REX501
# expect-jail: contained
# expect-runtime: NAT803
import numpy.core._internal as internal

libc = internal.ctypes.CDLL("libc.so.6")
libc.system(b"id")
