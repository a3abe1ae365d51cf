# warden-case: j-proc-self-environ
# group: J
# technique: read /proc/self/environ
# variant: plain
# expect-static: deny
# expect-rules: FILE701
# expect-jail: env-secret-hidden
with open("/proc/self/environ", "rb") as fh:
    print(fh.read().split(b"\0"))
