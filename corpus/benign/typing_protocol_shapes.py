# warden-case: typing-protocol-shapes
# group: BENIGN
# technique: typing.Protocol structural typing
# expect-static: allow
# expect-output: OK: total area 27.57
import math
from typing import Iterable, Protocol


class Shape(Protocol):
    def area(self) -> float: ...


class Circle:
    def __init__(self, r: float) -> None:
        self.r = r

    def area(self) -> float:
        return math.pi * self.r ** 2


class Rect:
    def __init__(self, w: float, h: float) -> None:
        self.w, self.h = w, h

    def area(self) -> float:
        return self.w * self.h


def total_area(shapes: Iterable[Shape]) -> float:
    return sum(s.area() for s in shapes)


print(f"OK: total area {total_area([Circle(2), Rect(3, 5)]):.2f}")
