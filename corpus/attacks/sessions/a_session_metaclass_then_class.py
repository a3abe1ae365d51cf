# warden-case: a-session-metaclass-then-class
# group: A
# technique: a session defines a metaclass whose __new__ starts a process, and a later cell creates a class with it
# variant: other
# session: cells
# expect-static: deny
# expect-rules: DYN404
# expect-runtime: PROC801
# expect-jail: contained
# %% hook
class Registry(type):
    def __new__(meta, name, bases, namespace):
        import os
        os.system("id")
        return super().__new__(meta, name, bases, namespace)
# %% trigger
class Model(metaclass=Registry):
    pass
