# warden-case: j-pty-spawn
# group: J
# technique: pty.spawn a shell
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: no-survivor
import pty

pty.spawn("/bin/sh")
