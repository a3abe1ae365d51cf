# warden-case: e-rt3-type-hints-runtime-annotations
# group: E
# technique: typing.get_type_hints on a class whose __annotations__ the program filled at run time with a computed import
# variant: computed-string
# expect-static: deny
# expect-rules: ATTR301
# expect-jail: contained
# expect-runtime: IMP101
import typing


class Record:
    pass


Record.__annotations__ = {"field": "__import__('" + "ftp" + "lib')"}
print(typing.get_type_hints(Record))
