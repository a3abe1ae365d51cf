# warden-case: m-os-exit-skip-output
# group: M
# technique: os._exit cuts the output contract short
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained
import os

print('{"rows": [1, 2,', end="")
os._exit(0)
