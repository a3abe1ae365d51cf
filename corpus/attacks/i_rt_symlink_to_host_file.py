# warden-case: i-rt-symlink-to-host-file
# group: I
# technique: a symlink in the work dir points at a host file outside the read roots; the program reads the link
# variant: other
# expect-static: deny
# expect-rules: IMP101
# expect-runtime: FILE701
# expect-jail: no-read /etc/passwd
import os
os.symlink("/etc/passwd", "notes.txt")
with open("notes.txt") as handle:
    print(handle.read())
