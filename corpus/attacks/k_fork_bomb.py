# warden-case: k-fork-bomb
# group: K
# technique: os.fork bomb
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: no-survivor; host-process-survives
import os

while True:
    os.fork()
