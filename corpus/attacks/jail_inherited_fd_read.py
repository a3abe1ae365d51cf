# warden-case: jail-inherited-fd-read
# group: JAIL
# technique: read from a descriptor the parent may have leaked
# variant: plain
# expect-static: deny
# expect-rules: FILE701
# expect-jail: canary-unread
with open("/proc/self/fd/3", "rb") as fh:
    print("fd 3", fh.read(64))
with open("/proc/self/fd/4", "rb") as fh:
    print("fd 4", fh.read(64))
