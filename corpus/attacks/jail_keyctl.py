# warden-case: jail-keyctl
# group: JAIL
# technique: keyctl reads the session keyring
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained; layer seccomp
import ctypes

libc = ctypes.CDLL(None, use_errno=True)
buf = ctypes.create_string_buffer(256)
rc = libc.syscall(250, 6, -3, buf, 256)
print("keyctl", rc, ctypes.get_errno())
