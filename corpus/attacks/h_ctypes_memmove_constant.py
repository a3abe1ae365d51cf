# warden-case: h-ctypes-memmove-constant
# group: H
# technique: ctypes.memmove overwrites interpreter memory (corrupt a small int)
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained
import ctypes

src = ctypes.c_long(7)
ctypes.memmove(id(1) + 24, ctypes.addressof(src), 8)
print(1 + 1)
