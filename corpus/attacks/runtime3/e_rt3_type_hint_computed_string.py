# warden-case: e-rt3-type-hint-computed-string
# group: E
# technique: typing.get_type_hints on a class whose annotation string is built at run time (no constant holds it)
# variant: computed-string
# expect-static: deny
# expect-rules: ATTR301
# expect-jail: contained
# expect-runtime: DYN401
import typing


class Record:
    pass


name = "".join(["PW", "NED"])
Record.__annotations__ = {"field": "open('/work/" + name + "', 'w')"}
typing.get_type_hints(Record)
