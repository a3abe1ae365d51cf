# warden-case: jail-userfaultfd
# group: JAIL
# technique: userfaultfd syscall (kernel exploit primitive)
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained; layer seccomp
import ctypes

libc = ctypes.CDLL(None, use_errno=True)
rc = libc.syscall(323, 0)
print("userfaultfd", rc, ctypes.get_errno())
