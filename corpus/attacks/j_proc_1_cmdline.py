# warden-case: j-proc-1-cmdline
# group: J
# technique: read /proc/1/cmdline to learn the host init
# variant: plain
# expect-static: deny
# expect-rules: FILE701
# expect-jail: no-read /proc/1/cmdline
with open("/proc/1/cmdline", "rb") as fh:
    print(fh.read())
