# warden-case: descriptor-positive-validator
# group: BENIGN
# technique: a validating descriptor with __set_name__, __get__ and __set__
# expect-static: allow
# expect-output: OK: price 9.5, negative rejected
class Positive:
    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return obj.__dict__[self.name]

    def __set__(self, obj, value):
        if value <= 0:
            raise ValueError(f"{self.name} must be positive")
        obj.__dict__[self.name] = value


class Item:
    price = Positive()

    def __init__(self, price):
        self.price = price


item = Item(9.5)
try:
    Item(-1)
except ValueError:
    print(f"OK: price {item.price}, negative rejected")
