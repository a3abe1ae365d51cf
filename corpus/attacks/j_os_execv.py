# warden-case: j-os-execv
# group: J
# technique: os.execv replaces the interpreter
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained
import os

os.execv("/bin/sh", ["sh", "-c", "id"])
