# warden-case: i-home-ssh-key
# group: I
# technique: read ~/.ssh/id_rsa through Path.expanduser
# variant: plain
# expect-static: deny
# expect-rules: FILE701
# expect-jail: canary-unread; no-list /root
from pathlib import Path

key = Path("~/.ssh/id_rsa").expanduser()
print(key.read_text())
