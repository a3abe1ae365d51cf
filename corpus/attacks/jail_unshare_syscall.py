# warden-case: jail-unshare-syscall
# group: JAIL
# technique: raw unshare(CLONE_NEWUSER) syscall via ctypes
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained; layer seccomp
import ctypes

libc = ctypes.CDLL(None, use_errno=True)
rc = libc.syscall(272, 0x10000000)
print("unshare", rc, ctypes.get_errno())
