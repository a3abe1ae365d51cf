# warden-case: i-rt2-open-code-host-file
# group: I
# technique: io.open_code reads a host file
# variant: plain
# expect-static: allow
# expect-rules: none
# expect-jail: canary-unread
# expect-runtime: FILE701
import io

print(io.open_code("/root/warden-canary").read())
