# warden-case: jail-write-outside-workdir
# group: JAIL
# technique: write a file under /etc
# variant: plain
# expect-static: deny
# expect-rules: FILE702
# expect-jail: no-path /etc/warden-escape*
with open("/etc/warden-escape", "w") as fh:
    fh.write("escaped\n")
