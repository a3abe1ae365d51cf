# warden-case: j-os-system
# group: J
# technique: os.system
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained
import os

os.system("id; uname -a")
