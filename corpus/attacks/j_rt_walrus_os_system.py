# warden-case: j-rt-walrus-os-system
# group: J
# technique: the os module bound by a walrus, then system called on the name
# variant: assignment-alias
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained
# expect-runtime: PROC801
import os

if (m := os) is not None:
    m.system("id > /tmp/warden-escape-walrus")
