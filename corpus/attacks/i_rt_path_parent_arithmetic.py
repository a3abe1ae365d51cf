# warden-case: i-rt-path-parent-arithmetic
# group: I
# technique: pathlib .parent arithmetic climbs from the work dir to /etc
# variant: computed-string
# expect-static: allow
# expect-rules: none
# expect-jail: no-read /etc/shadow
# expect-runtime: FILE701
from pathlib import Path

target = Path.cwd().parent / "etc" / "shadow"
print(target.read_text())
