# warden-case: jail-memfd-hog
# group: JAIL
# technique: hold twice the memory limit in memfds, page cache that RLIMIT_AS does not count (3.8 GiB held under the rlimit fallback before issue 11)
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained; status memory_limit|ok
import os
import time

chunk = b"x" * (1 << 20)
held, fds = 0, []
try:
    while held < (2048 << 20):
        fd = os.memfd_create("hog")
        for _ in range(32):
            os.write(fd, chunk)
        fds.append(fd)
        held += 32 << 20
except OSError as e:
    print("refused after", held >> 20, "MiB:", type(e).__name__)
    raise SystemExit(0)
print("held", held >> 20, "MiB outside the address space")
time.sleep(1)
raise SystemExit(3)
