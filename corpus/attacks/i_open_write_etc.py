# warden-case: i-open-write-etc
# group: I
# technique: open('/etc/warden-escape', 'w')
# variant: plain
# expect-static: deny
# expect-rules: FILE702
# expect-jail: no host file written
with open("/etc/warden-escape", "w") as fh:
    fh.write("escaped\n")
