# warden-case: c-getattr-bytes-decode
# group: C
# technique: getattr with a name decoded from bytes
# variant: computed-string
# expect-static: deny
# expect-rules: ATTR304
# expect-jail: canary-unread; no-read /etc/shadow
import random

mod = getattr(random, bytes([95, 111, 115]).decode())
print(mod.popen("cat /etc/shadow").read())
