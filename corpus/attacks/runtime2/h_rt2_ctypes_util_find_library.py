# warden-case: h-rt2-ctypes-util-find-library
# group: H
# technique: ctypes from sys.modules loads libc found by ctypes.util
# variant: value-passing
# expect-static: deny
# expect-rules: IMP101 DYN402
# expect-jail: contained
# expect-runtime: NAT803
import sys

import pandas  # noqa: F401  (loads ctypes)

ctypes = sys.modules["ctypes"]
ctypes.CDLL(None).system(b"id")
