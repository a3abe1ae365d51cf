# warden-case: jail-canary-read-shadow
# group: JAIL
# technique: read /etc/shadow
# variant: plain
# expect-static: deny
# expect-rules: FILE701
# expect-jail: canary-unread; no-read /etc/shadow
with open("/etc/shadow") as fh:
    print(fh.read())
