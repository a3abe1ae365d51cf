# warden-case: i-rt2-linecache-host-file
# group: I
# technique: linecache.getlines reads a host file for the program
# variant: other
# expect-static: deny
# expect-rules: IMP101 DYN402
# expect-jail: no-read /etc/passwd
# expect-runtime: FILE701
import sys

import pandas  # noqa: F401

linecache = sys.modules["linecache"]

print(linecache.getlines("/etc/passwd"))
