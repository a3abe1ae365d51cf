# warden-case: i-rt2-os-open-fd-read
# group: I
# technique: os.open with flags reads a host file descriptor-wise
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: canary-unread
# expect-runtime: FILE701
import os

fd = os.open("/root/warden-canary", os.O_RDONLY)
print(os.read(fd, 100))
