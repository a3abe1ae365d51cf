# warden-case: a-metaclass-hook
# group: A
# technique: metaclass __new__ runs attacker code while the class statement executes
# variant: other
# expect-static: deny
# expect-rules: DYN404 DYN401
# expect-jail: contained
class Loader(type):
    def __new__(mcs, name, bases, ns):
        ns["status"] = eval("__import__('os').system('id')")
        return super().__new__(mcs, name, bases, ns)


class Report(metaclass=Loader):
    pass
