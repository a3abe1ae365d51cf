# warden-case: match-class-patterns-points
# group: BENIGN
# technique: match statement with class patterns on normal attributes
# expect-static: allow
# expect-output: OK: descriptions ['origin', 'on y axis at 4', 'on x axis at 2', 'point 1,1']
from dataclasses import dataclass


@dataclass
class Point:
    x: int
    y: int


def describe(p):
    match p:
        case Point(x=0, y=0):
            return "origin"
        case Point(x=0, y=y):
            return f"on y axis at {y}"
        case Point(x=x, y=0):
            return f"on x axis at {x}"
        case Point(x=x, y=y):
            return f"point {x},{y}"
        case _:
            return "not a point"


points = [Point(0, 0), Point(0, 4), Point(2, 0), Point(1, 1)]
print(f"OK: descriptions {[describe(p) for p in points]}")
