# warden-case: i-rt-fileio-host-file
# group: I
# technique: io.FileIO opens a host file directly
# variant: plain
# expect-static: allow
# expect-rules: none
# expect-jail: no-read /etc/shadow
# expect-runtime: FILE701
import io

print(io.FileIO("/etc/" + "shadow").read())
