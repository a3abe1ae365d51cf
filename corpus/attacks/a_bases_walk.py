# warden-case: a-bases-walk
# group: A
# technique: reach object through int.__bases__[0] then subclasses
# variant: plain
# expect-static: deny
# expect-rules: ATTR301
# expect-jail: contained
base = (1).__class__.__bases__[0]
names = {c.__name__: c for c in base.__subclasses__()}
names["_wrap_close"].__init__.__globals__["system"]("id")
