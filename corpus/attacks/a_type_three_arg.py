# warden-case: a-type-three-arg
# group: A
# technique: three-argument type() defines a class whose __del__ hook runs the payload
# variant: other
# expect-static: deny
# expect-rules: DYN404 ATTR302
# expect-jail: contained
import random

Probe = type("Probe", (), {"__del__": lambda self: random._os.system("id")})
p = Probe()
del p
