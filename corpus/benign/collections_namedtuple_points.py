# warden-case: collections-namedtuple-points
# group: BENIGN
# technique: namedtuple records
# expect-static: allow
# expect-output: OK: centroid Point(x=2.0, y=3.0)
from collections import namedtuple

Point = namedtuple("Point", ["x", "y"])
pts = [Point(1, 2), Point(3, 4), Point(2, 3)]
cx = sum(p.x for p in pts) / len(pts)
cy = sum(p.y for p in pts) / len(pts)
far = max(pts, key=lambda p: p.x ** 2 + p.y ** 2)
print("farthest:", far, "as dict:", dict(zip(("x", "y"), far)))
print(f"OK: centroid {Point(cx, cy)}")
