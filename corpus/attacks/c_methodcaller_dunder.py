# warden-case: c-methodcaller-dunder
# group: C
# technique: operator.methodcaller calls __subclasses__ by name
# variant: other
# expect-static: deny
# expect-rules: ATTR301
# expect-jail: contained
import operator

subs = operator.methodcaller("__subclasses__")(object)
wrap = [c for c in subs if "wrap_close" in repr(c)][0]
operator.attrgetter("__init__.__globals__")(wrap)["system"]("id")
