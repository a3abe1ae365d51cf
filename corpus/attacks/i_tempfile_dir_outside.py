# warden-case: i-tempfile-dir-outside
# group: I
# technique: tempfile.mkstemp with dir= outside the write roots plants a file there
# variant: plain
# expect-static: deny
# expect-rules: FILE702
# expect-jail: interpreter-intact
# expect-runtime: FILE702
import os
import tempfile

fd, path = tempfile.mkstemp(suffix=".py", prefix="warden-escape", dir="/usr/lib/python3.11")
os.write(fd, b"raise SystemExit('poisoned')\n")
