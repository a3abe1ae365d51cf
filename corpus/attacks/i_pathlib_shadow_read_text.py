# warden-case: i-pathlib-shadow-read-text
# group: I
# technique: pathlib.Path('/etc/shadow').read_text()
# variant: plain
# expect-static: deny
# expect-rules: FILE701
# expect-jail: canary-unread; no-read /etc/shadow
from pathlib import Path

print(Path("/etc/shadow").read_text())
