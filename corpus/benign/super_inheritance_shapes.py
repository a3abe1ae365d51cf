# warden-case: super-inheritance-shapes
# group: BENIGN
# technique: inheritance with super().__init__()
# expect-static: allow
# expect-output: OK: areas [12, 9] names ['rect', 'square']
class Shape:
    def __init__(self, name):
        self.name = name

    def area(self):
        raise NotImplementedError


class Rect(Shape):
    def __init__(self, w, h, name="rect"):
        super().__init__(name)
        self.w = w
        self.h = h

    def area(self):
        return self.w * self.h


class Square(Rect):
    def __init__(self, side):
        super().__init__(side, side, name="square")


shapes = [Rect(3, 4), Square(3)]
print("is shape:", all(isinstance(s, Shape) for s in shapes))
print(f"OK: areas {[s.area() for s in shapes]} names {[s.name for s in shapes]}")
