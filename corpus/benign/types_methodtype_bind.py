# warden-case: types-methodtype-bind
# group: BENIGN
# technique: types.MethodType binds a function to one instance
# expect-static: allow
# expect-output: OK: hello from sensor-7
import types


class Sensor:
    def __init__(self, name):
        self.name = name


def greet(self):
    return f"hello from {self.name}"


s = Sensor("sensor-7")
s.greet = types.MethodType(greet, s)
print(f"OK: {s.greet()}")
