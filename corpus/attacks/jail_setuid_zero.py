# warden-case: jail-setuid-zero
# group: JAIL
# technique: setuid(0) / setgroups
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: outputs-regular; layer ns:user
import os

os.setgroups([0])
os.setuid(0)
print(os.getuid())
