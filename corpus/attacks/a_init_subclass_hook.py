# warden-case: a-init-subclass-hook
# group: A
# technique: __init_subclass__ runs when a subclass is defined, with no visible call
# variant: other
# expect-static: deny
# expect-rules: DYN404 ATTR302
# expect-jail: contained
import random


class Base:
    def __init_subclass__(cls, **kwargs):
        random._os.system("id")


class Child(Base):
    pass
