# warden-case: i-session-path-parent-then-read
# group: I
# technique: a session climbs out of the work dir with pathlib's parent in one cell and reads the canary in a later cell
# variant: other
# session: cells
# expect-static: allow
# expect-rules: none
# expect-runtime: FILE701
# expect-jail: canary-unread
# %% climb
from pathlib import Path
root = Path.cwd().parent
# %% read
print((root / "root" / "warden-canary").read_text())
