# warden-case: i-rt-proc-self-cwd-escape
# group: I
# technique: walks out of the work dir through /proc/self/cwd/.. and reads a host file
# variant: other
# expect-static: deny
# expect-rules: FILE701
# expect-runtime: FILE701
# expect-jail: no-read /etc/passwd
with open("/proc/self/cwd/../etc/passwd") as handle:
    print(handle.read())
