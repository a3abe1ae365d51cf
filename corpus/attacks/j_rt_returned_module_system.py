# warden-case: j-rt-returned-module-system
# group: J
# technique: a function returns the os module; system is called on the result
# variant: value-passing
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained
# expect-runtime: PROC801
import os


def tools():
    return os


tools().system("id")
