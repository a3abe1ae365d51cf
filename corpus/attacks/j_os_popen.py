# warden-case: j-os-popen
# group: J
# technique: os.popen reading a host file
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: no host file read
import os

print(os.popen("cat /etc/shadow").read())
