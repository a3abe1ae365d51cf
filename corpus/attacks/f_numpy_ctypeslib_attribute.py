# warden-case: f-numpy-ctypeslib-attribute
# group: F
# technique: np.ctypeslib reached as an attribute of numpy
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained
import numpy as np

libc = np.ctypeslib.load_library("libc.so.6", "/lib/x86_64-linux-gnu")
libc.system(b"id")
