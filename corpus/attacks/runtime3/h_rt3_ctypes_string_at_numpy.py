# warden-case: h-rt3-ctypes-string-at-numpy
# group: H
# technique: ctypes.string_at through numpy's ctypes reads raw memory
# variant: raw-memory
# expect-static: deny
# expect-rules: IMP101 REX501
# expect-jail: contained
# expect-runtime: NAT803
import os

import numpy

ctypes = os.sys.modules["ctypes"]
print(ctypes.string_at(id(os), 64))
