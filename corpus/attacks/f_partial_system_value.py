# warden-case: f-partial-system-value
# group: F
# technique: os.system wrapped in functools.partial and called later
# variant: value-passing
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained
import functools
from os import system

job = functools.partial(system, "id")
job()
