# warden-case: e-rt2-type-hints-forward-ref
# group: E
# technique: typing.get_type_hints evaluates a string annotation that runs a command
# variant: annotation
# expect-static: allow
# expect-rules: none
# expect-jail: contained
# expect-runtime: PROC801
import os
import typing


def f(x: "os.system('id')"):
    return x


typing.get_type_hints(f)
