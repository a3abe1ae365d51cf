# warden-case: a-rt-init-subclass-kwargs
# group: A
# technique: __init_subclass__ receives a module through class keywords and starts a process
# variant: other
# expect-static: deny
# expect-rules: REX501
# expect-runtime: PROC801
# expect-jail: contained
import os.path
class Base:
    def __init_subclass__(cls, tool=None, **kwargs):
        super().__init_subclass__(**kwargs)
        tool.system("id")
class Child(Base, **{"tool": os.path.os}):
    pass
