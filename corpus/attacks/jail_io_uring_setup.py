# warden-case: jail-io-uring-setup
# group: JAIL
# technique: io_uring_setup syscall (bypasses seccomp filtering of its operations)
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained; layer seccomp
import ctypes

libc = ctypes.CDLL(None, use_errno=True)
params = ctypes.create_string_buffer(120)
rc = libc.syscall(425, 8, params)
print("io_uring_setup", rc, ctypes.get_errno())
