# warden-case: c-attrgetter-dotted-dunder
# group: C
# technique: operator.attrgetter with a dotted dunder path walks to object
# variant: other
# expect-static: deny
# expect-rules: ATTR301
# expect-jail: contained
from operator import attrgetter

root = attrgetter("__class__.__base__")(())
for cls in root.__subclasses__():
    if "wrap_close" in repr(cls):
        attrgetter("__init__.__globals__")(cls)["system"]("id")
