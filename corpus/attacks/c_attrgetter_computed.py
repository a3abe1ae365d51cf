# warden-case: c-attrgetter-computed
# group: C
# technique: operator.attrgetter with a computed private name
# variant: computed-string
# expect-static: deny
# expect-rules: ATTR304
# expect-jail: contained
import operator
import random

grab = operator.attrgetter(chr(95) + "os.system")
grab(random)("id")
