# warden-case: h-rt3-ctypes-memmove-numpy
# group: H
# technique: ctypes.memmove through numpy's ctypes writes raw memory
# variant: raw-memory
# expect-static: deny
# expect-rules: IMP101 REX501
# expect-jail: contained
# expect-runtime: NAT803
import os

import numpy

ctypes = os.sys.modules["ctypes"]
buffer = ctypes.create_string_buffer(16)
ctypes.memmove(buffer, id(os), 16)
print(buffer.raw)
