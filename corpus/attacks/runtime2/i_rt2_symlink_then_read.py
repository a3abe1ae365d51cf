# warden-case: i-rt2-symlink-then-read
# group: I
# technique: a symlink in the work dir pointing at the canary, then read through the link
# variant: other
# expect-static: deny
# expect-rules: IMP101
# expect-jail: canary-unread
# expect-runtime: FILE701
import os

os.symlink("/root/warden-canary", "link.txt")
print(open("link.txt").read())
