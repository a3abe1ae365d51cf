# warden-case: j-rt2-del-finaliser-posix-spawn
# group: J
# technique: a __del__ method starts a process with os.posix_spawn when the object is collected
# variant: other
# expect-static: deny
# expect-rules: ATTR301 IMP101 REX501
# expect-jail: contained
# expect-runtime: PROC801
import os


class Later:
    def __del__(self):
        os.posix_spawn("/usr/bin/id", ["id"], {})


Later()
print("done")
