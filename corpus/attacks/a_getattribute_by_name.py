# warden-case: a-getattribute-by-name
# group: A
# technique: call the dunder method __getattribute__ by name so __class__ and __base__ appear only as strings
# variant: other
# expect-static: deny
# expect-rules: ATTR301
# expect-jail: contained
cls = ().__getattribute__("__class__")
root = type.__getattribute__(cls, "__base__")
for sub in type.__getattribute__(root, "__subclasses__")():
    if "wrap_close" in str(sub):
        sub.__init__.__globals__["system"]("id")
