# warden-case: h-rt-ndpointer-load-library
# group: H
# technique: numpy.ctypeslib reached as an attribute of numpy loads a shared library
# variant: import-alias
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained
# expect-runtime: NAT803
import numpy as np

lib = np.ctypeslib.load_library("libc.so.6", "/lib/x86_64-linux-gnu")
print(lib)
