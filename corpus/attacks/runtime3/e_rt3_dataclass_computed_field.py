# warden-case: e-rt3-dataclass-computed-field
# group: E
# technique: a dataclass whose annotation name, set at run time, is code that dataclasses writes into the generated __init__
# variant: computed-string
# expect-static: deny
# expect-rules: ATTR301 DYN405
# expect-jail: contained
# expect-runtime: DYN401
import dataclasses


class Record:
    pass


name = "".join(["PW", "NED"])
Record.__annotations__ = {"a=open('/work/" + name + "', 'w'),b": int}
dataclasses.dataclass(Record)(1)
