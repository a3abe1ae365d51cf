# warden-case: k-inode-flood
# group: K
# technique: create files until inodes run out
# variant: plain
# expect-static: allow
# expect-rules: none
# expect-jail: status error
from pathlib import Path

out = Path("many")
out.mkdir(exist_ok=True)
i = 0
while True:
    (out / f"f{i}").touch()
    i += 1
