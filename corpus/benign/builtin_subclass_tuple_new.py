# warden-case: builtin-subclass-tuple-new
# group: BENIGN
# technique: a tuple subclass (a 2-D point) built with super().__new__
# expect-static: allow
# expect-output: OK: point (3, 4) norm 5.0
import math


class Point(tuple):
    def __new__(cls, x, y):
        return super().__new__(cls, (x, y))

    @property
    def norm(self):
        return math.hypot(*self)


p = Point(3, 4)
print(f"OK: point {tuple(p)} norm {p.norm}")
