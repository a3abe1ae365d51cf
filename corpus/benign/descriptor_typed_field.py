# warden-case: descriptor-typed-field
# group: BENIGN
# technique: a typed-field descriptor that converts values on assignment
# expect-static: allow
# expect-output: OK: qty is int 3
class Typed:
    def __init__(self, kind):
        self.kind = kind

    def __set_name__(self, owner, name):
        self.key = name

    def __get__(self, obj, objtype=None):
        return self if obj is None else obj.__dict__.get(self.key)

    def __set__(self, obj, value):
        obj.__dict__[self.key] = self.kind(value)


class Order:
    qty = Typed(int)


order = Order()
order.qty = "3"
print(f"OK: qty is {type(order.qty).__name__} {order.qty}")
