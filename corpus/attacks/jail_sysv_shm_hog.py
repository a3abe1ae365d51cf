# warden-case: jail-sysv-shm-hog
# group: JAIL
# technique: fill detached System V shared memory segments, which outlive their process and no rlimit counts, past the memory limit
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained; status memory_limit|ok
import ctypes
import os

libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
held = 0
while held < (2048 << 20):
    sid = libc.shmget(0, 64 << 20, 0o1600)
    if sid < 0:
        print("refused after", held >> 20, "MiB:", os.strerror(ctypes.get_errno()))
        raise SystemExit(0)
    at = libc.shmat(sid, None, 0)
    ctypes.memset(at, 1, 64 << 20)
    libc.shmdt(ctypes.c_void_p(at))
    held += 64 << 20
print("held", held >> 20, "MiB in detached segments")
raise SystemExit(3)
