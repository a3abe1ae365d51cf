# warden-case: jail-settimeofday
# group: JAIL
# technique: set the system clock via ctypes
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: clock-unchanged
import ctypes

libc = ctypes.CDLL(None, use_errno=True)
tv = (ctypes.c_long * 2)(0, 0)
rc = libc.settimeofday(tv, None)
print("settimeofday", rc, ctypes.get_errno())
