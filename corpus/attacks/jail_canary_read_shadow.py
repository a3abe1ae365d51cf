# warden-case: jail-canary-read-shadow
# group: JAIL
# technique: read /etc/shadow
# variant: plain
# expect-static: deny
# expect-rules: FILE701
# expect-jail: no host file read
with open("/etc/shadow") as fh:
    print(fh.read())
