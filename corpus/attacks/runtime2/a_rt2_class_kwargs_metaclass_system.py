# warden-case: a-rt2-class-kwargs-metaclass-system
# group: A
# technique: class creation with **{'metaclass': ...} where the metaclass is a function that runs os.system
# variant: container
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained
# expect-runtime: PROC801
import os

hooks = {"metaclass": lambda name, bases, ns: os.system("id")}


class Widget(**hooks):
    pass
