# warden-case: i-shadow-open-bound-after-use
# group: I
# technique: open reads a host file before the module defines its own open, so the read is the builtin
# variant: other
# expect-static: deny
# expect-rules: FILE701
# expect-jail: canary-unread
# expect-runtime: FILE701
print(open("/root/warden-canary").read())


def open(path):
    return path
