# warden-case: m-rt-del-at-shutdown
# group: M
# technique: an object whose __del__ starts a process is left for interpreter shutdown
# variant: other
# expect-static: deny
# expect-rules: ATTR301 REX501
# expect-runtime: PROC801
# expect-jail: contained
import os.path
class Late:
    def __del__(self):
        os.path.os.system("id")
keep = Late()
raise SystemExit(3)
