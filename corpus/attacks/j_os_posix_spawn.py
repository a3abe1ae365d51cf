# warden-case: j-os-posix-spawn
# group: J
# technique: os.posix_spawn
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained
import os

pid = os.posix_spawn("/usr/bin/id", ["id"], {})
os.waitpid(pid, 0)
