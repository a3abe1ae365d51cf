# warden-case: f-numpy-ctypeslib-import
# group: F
# technique: import numpy.ctypeslib (a dangerous submodule of an allowed package)
# variant: import-alias
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained
import numpy.ctypeslib as ctl

ctl.ctypes.CDLL(None).system(b"id")
