# warden-case: j-os-popen
# group: J
# technique: os.popen reading a host file
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: canary-unread; no-read /etc/shadow
import os

print(os.popen("cat /etc/shadow").read())
