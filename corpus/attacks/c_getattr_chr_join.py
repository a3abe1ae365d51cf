# warden-case: c-getattr-chr-join
# group: C
# technique: getattr with a name built from chr() codes joined at run time
# variant: computed-string
# expect-static: deny
# expect-rules: ATTR304
# expect-jail: contained
import random

name = "".join(chr(c) for c in (95, 111, 115))
getattr(random, name).system("id")
