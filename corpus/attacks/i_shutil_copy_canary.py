# warden-case: i-shutil-copy-canary
# group: I
# technique: shutil.copy of the canary outside the read roots into the work dir, then print the copy
# variant: plain
# expect-static: deny
# expect-rules: FILE701
# expect-jail: canary-unread
# expect-runtime: FILE701
import shutil

shutil.copy("/root/warden-canary", "stolen.txt")
print(open("stolen.txt").read())
