# warden-case: j-rt2-excepthook-spawn
# group: J
# technique: sys.excepthook replaced by a function that spawns a process when the program fails (called with no program frame: since issue 24 the runtime layer judges that code as the program's and stops it at its first compile event, before the spawn)
# variant: other
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained
# expect-runtime: DYN401
import os
import sys


def hook(kind, value, tb):
    os.spawnlp(os.P_WAIT, "id", "id")


sys.excepthook = hook
raise ValueError("boom")
