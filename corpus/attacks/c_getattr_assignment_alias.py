# warden-case: c-getattr-assignment-alias
# group: C
# technique: alias getattr to another name and call it with a computed name
# variant: assignment-alias
# expect-static: deny
# expect-rules: ATTR304
# expect-jail: contained
import random

fetch = getattr
fetch(random, chr(95) + "os").system("id")
