# warden-case: jail-mount-tmpfs
# group: JAIL
# technique: mount a tmpfs via ctypes
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained; layer seccomp
import ctypes

libc = ctypes.CDLL(None, use_errno=True)
rc = libc.mount(b"none", b"/mnt", b"tmpfs", 0, None)
print("mount", rc, ctypes.get_errno())
