# warden-case: e-code-object-swap
# group: E
# technique: swap a harmless function's __code__ for one that reads a host file
# variant: other
# expect-static: deny
# expect-rules: ATTR301 FILE701
# expect-jail: canary-unread; no-read /etc/shadow
def report():
    return "ok"


def grab():
    return open("/etc/shadow").read()


report.__code__ = grab.__code__
print(report())
