# warden-case: i-bs4-diagnose-path
# group: I
# technique: bs4.diagnose.diagnose opens a path it is given and prints what it parsed
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: canary-unread; no-read /etc/shadow
from bs4.diagnose import diagnose

diagnose("/etc/shadow")
