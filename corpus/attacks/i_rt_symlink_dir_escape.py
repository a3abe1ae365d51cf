# warden-case: i-rt-symlink-dir-escape
# group: I
# technique: a symlinked directory inside the work dir leads to /root; a path through it is read
# variant: other
# expect-static: deny
# expect-rules: IMP101
# expect-runtime: FILE701
# expect-jail: no-read /etc/passwd
import os
import pathlib
os.symlink("/etc", "data")
print(pathlib.Path("data/passwd").read_text())
