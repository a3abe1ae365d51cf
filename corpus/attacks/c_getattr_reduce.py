# warden-case: c-getattr-reduce
# group: C
# technique: functools.reduce(getattr, names, obj) walks an attribute chain
# variant: value-passing
# references: CVE-2025-5120
# expect-static: deny
# expect-rules: ATTR304
# expect-jail: contained
import random
from functools import reduce

run = reduce(getattr, ["_os", "system"], random)
run("id")
