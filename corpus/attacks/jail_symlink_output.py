# warden-case: jail-symlink-output
# group: JAIL
# technique: output file is a symlink to /etc/passwd
# variant: plain
# expect-static: deny
# expect-rules: FILE701
# expect-jail: outputs-regular; no-read /etc/passwd
from pathlib import Path

Path("result.csv").symlink_to(Path("/etc/passwd"))
print("wrote result.csv")
