# warden-case: i-rt2-proc-environ-file
# group: I
# technique: reading the environment of the jail's init process through /proc/1/environ
# variant: computed-string
# expect-static: deny
# expect-rules: FILE701
# expect-jail: env-secret-hidden
# expect-runtime: FILE701
print(open("/proc/1/environ", "rb").read())
