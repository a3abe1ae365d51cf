# warden-case: a-container-step-list
# group: A
# technique: store the walk as a list of attribute names and apply it with getattr in a loop
# variant: container
# expect-static: deny
# expect-rules: ATTR304 ATTR301
# expect-jail: contained
steps = ["__class__", "__base__", "__subclasses__"]
obj = ()
for step in steps:
    obj = getattr(obj, step)
for cls in obj():
    if "wrap_close" in repr(cls):
        env = getattr(getattr(cls, "__init__"), "__globals__")
        env["system"]("id")
