# warden-case: class-vector-dunders
# group: BENIGN
# technique: class defining __init__/__repr__/__eq__/__hash__/__len__/__iter__/__getitem__
# expect-static: allow
# expect-output: OK: Vector(4, 6) length 2 norm2 52
class Vector:
    def __init__(self, *coords):
        self.coords = tuple(coords)

    def __repr__(self):
        return "Vector(" + ", ".join(str(c) for c in self.coords) + ")"

    def __eq__(self, other):
        return isinstance(other, Vector) and self.coords == other.coords

    def __hash__(self):
        return hash(self.coords)

    def __len__(self):
        return len(self.coords)

    def __iter__(self):
        return iter(self.coords)

    def __getitem__(self, i):
        return self.coords[i]

    def plus(self, other):
        return Vector(*(a + b for a, b in zip(self, other)))


v = Vector(1, 2).plus(Vector(3, 4))
print("equal:", v == Vector(4, 6), "in set:", len({v, Vector(4, 6)}))
print(f"OK: {v!r} length {len(v)} norm2 {sum(c * c for c in v)}")
