# warden-case: i-shutil-make-archive-root
# group: I
# technique: shutil.make_archive of /root (the canary's directory) into the work dir, where warden collects it
# variant: plain
# expect-static: deny
# expect-rules: FILE701
# expect-jail: canary-unread; outputs-regular
# expect-runtime: FILE701
import shutil

shutil.make_archive("loot", "zip", root_dir="/root")
