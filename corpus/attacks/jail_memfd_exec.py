# warden-case: jail-memfd-exec
# group: JAIL
# technique: write a native binary into a memfd and execute it (execveat of the descriptor), which Landlock's execute right and the noexec mounts do not cover
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained; status ok; exit-code 0
import os

try:
    fd = os.memfd_create("payload", 0)
    with open("/usr/bin/false", "rb") as f:
        os.write(fd, f.read())
    # Had this worked, the program would now be /usr/bin/false and exit 1.
    os.execve(fd, ["false"], {})
except OSError as e:
    print("refused:", type(e).__name__)
try:
    os.memfd_create("payload", getattr(os, "MFD_EXEC", 0x10))
    print("MFD_EXEC accepted")
except OSError as e:
    print("MFD_EXEC refused:", type(e).__name__)
