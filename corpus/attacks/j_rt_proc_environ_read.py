# warden-case: j-rt-proc-environ-read
# group: J
# technique: reads the process environment through /proc/self/environ
# variant: other
# expect-static: deny
# expect-rules: FILE701
# expect-runtime: FILE701
# expect-jail: env-secret-hidden
with open("/proc/self/environ", "rb") as handle:
    print(handle.read().split(b"\0"))
