# warden-case: i-pathlib-glob-home
# group: I
# technique: glob other users' home directories for keys
# variant: plain
# expect-static: deny
# expect-rules: FILE701
# expect-jail: canary-unread; no-list /home
from pathlib import Path

for key in Path("/home").glob("*/.ssh/id_*"):
    print(key, key.read_text()[:40])
