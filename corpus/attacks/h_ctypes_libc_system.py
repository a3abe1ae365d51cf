# warden-case: h-ctypes-libc-system
# group: H
# technique: ctypes.CDLL(None).system
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained
import ctypes

libc = ctypes.CDLL(None)
libc.system(b"id")
