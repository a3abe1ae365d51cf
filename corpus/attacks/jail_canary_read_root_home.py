# warden-case: jail-canary-read-root-home
# group: JAIL
# technique: read a canary under /root
# variant: plain
# expect-static: deny
# expect-rules: FILE701
# expect-jail: canary-unread; no-list /root
from pathlib import Path

for name in ("warden-canary", ".bash_history", ".ssh/authorized_keys"):
    p = Path("/root") / name
    print(name, p.read_text())
