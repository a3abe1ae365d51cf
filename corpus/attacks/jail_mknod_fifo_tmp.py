# warden-case: jail-mknod-fifo-tmp
# group: JAIL
# technique: os.mknod with S_IFIFO in the private /tmp (a write root): seccomp refuses the node's type, not its place
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: status error; exit-code 1; outputs-regular
import os
import stat

os.mknod("/tmp/fifo", stat.S_IFIFO | 0o600)
print("made a FIFO node")
