# warden-case: i-open-etc-passwd
# group: I
# technique: open('/etc/passwd')
# variant: plain
# expect-static: deny
# expect-rules: FILE701
# expect-jail: canary-unread; no-read /etc/passwd
with open("/etc/passwd") as fh:
    print(fh.read())
