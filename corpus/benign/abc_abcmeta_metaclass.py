# warden-case: abc-abcmeta-metaclass
# group: BENIGN
# technique: abstract base class declared with metaclass=ABCMeta
# expect-static: allow
# expect-output: OK: total area 13.0
from abc import ABCMeta, abstractmethod


class Shape(metaclass=ABCMeta):
    @abstractmethod
    def area(self):
        ...


class Rect(Shape):
    def __init__(self, w, h):
        self.w, self.h = w, h

    def area(self):
        return self.w * self.h


shapes = [Rect(2, 3), Rect(1, 7)]
try:
    Shape()
except TypeError:
    pass
print(f"OK: total area {float(sum(s.area() for s in shapes))}")
