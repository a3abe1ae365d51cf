# warden-case: j-rt-type-hints-string-annotation
# group: J
# technique: typing.get_type_hints evaluates a string annotation that calls os.system
# variant: annotation
# expect-static: allow
# expect-rules: none
# expect-jail: contained
# expect-runtime: PROC801
import os
import typing


def report(value: "os.system('id')"):
    return value


typing.get_type_hints(report)
