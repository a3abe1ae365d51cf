# warden-case: i-shutil-copy-computed-canary
# group: I
# technique: shutil.copyfile of the canary through a path computed at run time (the static layer only warns)
# variant: computed-string
# expect-static: allow
# expect-rules: FILE704
# expect-jail: canary-unread
# expect-runtime: FILE701
import shutil

source = "/".join(["", "root", "warden-canary"])
shutil.copyfile(source, "stolen.txt")
print(open("stolen.txt").read())
