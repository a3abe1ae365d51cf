# warden-case: i-rt-expandvars-home-escape
# group: I
# technique: os.path.expandvars turns $HOME/.. into a path outside the roots
# variant: computed-string
# expect-static: allow
# expect-rules: FILE704
# expect-jail: canary-unread
# expect-runtime: FILE701
import os

path = os.path.expandvars("$HOME/../root/warden-canary")
with open(path) as fh:
    print(fh.read())
