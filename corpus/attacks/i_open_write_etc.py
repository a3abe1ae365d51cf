# warden-case: i-open-write-etc
# group: I
# technique: open('/etc/warden-escape', 'w')
# variant: plain
# expect-static: deny
# expect-rules: FILE702
# expect-jail: no-path /etc/warden-escape*
with open("/etc/warden-escape", "w") as fh:
    fh.write("escaped\n")
