# warden-case: h-rt3-ctypes-from-address-numpy
# group: H
# technique: ctypes from_address on an object's address (a type pun into the interpreter's memory)
# variant: raw-memory
# expect-static: deny
# expect-rules: IMP101 REX501
# expect-jail: contained
# expect-runtime: NAT803
import os

import numpy

ctypes = os.sys.modules["ctypes"]
words = (ctypes.c_size_t * 4).from_address(id(os))
print(list(words))
