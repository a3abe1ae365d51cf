# warden-case: j-rt-nonlocal-module-system
# group: J
# technique: the os module passed through a nonlocal binding, then system
# variant: value-passing
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained
# expect-runtime: PROC801
import os


def outer():
    handle = None

    def bind():
        nonlocal handle
        handle = os

    bind()
    return handle


outer().system("id")
