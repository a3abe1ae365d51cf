# warden-case: c-rt-match-keyword-spawnv
# group: C
# technique: a match class pattern binds os.spawnv by a keyword sub-pattern and calls it
# variant: match-pattern
# expect-static: deny
# expect-rules: REX501
# expect-runtime: PROC801
# expect-jail: contained
import os.path
match os.path:
    case object(os=found):
        pass
match found:
    case object(spawnv=start, P_WAIT=mode):
        start(mode, "/bin/sh", ["sh", "-c", "id"])
