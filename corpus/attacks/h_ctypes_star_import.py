# warden-case: h-ctypes-star-import
# group: H
# technique: from ctypes import *
# variant: other
# expect-static: deny
# expect-rules: IMP101 IMP102
# expect-jail: contained
from ctypes import *

CDLL(None).system(b"id")
