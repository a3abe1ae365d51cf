# warden-case: f-random-private-os
# group: F
# technique: stdlib private re-export random._os
# variant: plain
# expect-static: deny
# expect-rules: ATTR302
# expect-jail: contained
import random

random._os.system("id")
