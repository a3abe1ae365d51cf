# warden-case: c-getattr-reversed-string
# group: C
# technique: getattr with a reversed string slice
# variant: computed-string
# expect-static: deny
# expect-rules: ATTR304
# expect-jail: contained
import random

hidden = getattr(random, "so_"[::-1])
getattr(hidden, "metsys"[::-1])("id")
