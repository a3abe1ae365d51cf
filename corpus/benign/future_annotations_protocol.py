# warden-case: future-annotations-protocol
# group: BENIGN
# technique: postponed annotations with typing.Protocol and Optional
# expect-static: allow
# expect-output: OK: area 12
from __future__ import annotations

from typing import Optional, Protocol


class HasArea(Protocol):
    def area(self) -> float: ...


class Box:
    def __init__(self, w: float, h: float, parent: Optional[Box] = None) -> None:
        self.w, self.h, self.parent = w, h, parent

    def area(self) -> float:
        return self.w * self.h


def total(items: list[HasArea]) -> float:
    return sum(i.area() for i in items)


print(f"OK: area {total([Box(2, 3), Box(3, 2)])}")
