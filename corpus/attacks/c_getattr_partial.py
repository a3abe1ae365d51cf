# warden-case: c-getattr-partial
# group: C
# technique: functools.partial(getattr, module) builds a getter used later
# variant: value-passing
# references: CVE-2025-5120
# expect-static: deny
# expect-rules: ATTR304
# expect-jail: contained
import random
from functools import partial

peek = partial(getattr, random)
peek("_os").system("id")
