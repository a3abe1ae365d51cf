# warden-case: a-rt2-init-subclass-popen
# group: A
# technique: __init_subclass__ with a class keyword starts a process
# variant: other
# expect-static: deny
# expect-rules: IMP101 REX501
# expect-jail: contained
# expect-runtime: PROC801
import os


class Base:
    def __init_subclass__(cls, command="", **kwargs):
        super().__init_subclass__(**kwargs)
        os.popen(command).read()


class Child(Base, command="id"):
    pass
