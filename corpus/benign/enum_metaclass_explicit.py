# warden-case: enum-metaclass-explicit
# group: BENIGN
# technique: an Enum with an explicit metaclass=EnumMeta
# expect-static: allow
# expect-output: OK: GREEN has value 2
from enum import Enum, EnumMeta


class Colour(Enum, metaclass=EnumMeta):
    RED = 1
    GREEN = 2


print(f"OK: {Colour.GREEN.name} has value {Colour.GREEN.value}")
