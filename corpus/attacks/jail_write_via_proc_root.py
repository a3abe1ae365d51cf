# warden-case: jail-write-via-proc-root
# group: JAIL
# technique: write through /proc/self/root
# variant: plain
# expect-static: deny
# expect-rules: FILE702
# expect-jail: no-path /tmp/warden-escape*
with open("/proc/self/root/tmp/warden-escape", "w") as fh:
    fh.write("escaped\n")
