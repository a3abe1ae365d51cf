# warden-case: descriptor-lazy-property
# group: BENIGN
# technique: a non-data descriptor that caches a computed value
# expect-static: allow
# expect-output: OK: computed once, mean 2.0
class lazy:
    def __init__(self, func):
        self.func = func

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        value = self.func(obj)
        obj.__dict__[self.name] = value
        return value


class Stats:
    calls = 0

    def __init__(self, data):
        self.data = data

    @lazy
    def mean(self):
        Stats.calls += 1
        return sum(self.data) / len(self.data)


s = Stats([1, 2, 3])
s.mean
s.mean
print(f"OK: computed once, mean {s.mean}" if Stats.calls == 1 else "FAIL")
