# warden-case: j-os-execv
# group: J
# technique: os.execv replaces the interpreter
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained: command runs inside the jail only
import os

os.execv("/bin/sh", ["sh", "-c", "id"])
