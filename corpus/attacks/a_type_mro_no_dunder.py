# warden-case: a-type-mro-no-dunder
# group: A
# technique: reach object with type(x).mro() (no dunder) and build every dunder name at run time
# variant: computed-string
# expect-static: deny
# expect-rules: ATTR304
# expect-jail: contained
root = type(0).mro()[-1]
u = "_" * 2
subs = getattr(root, u + "subclasses" + u)()
wrap = [c for c in subs if str(c).endswith("_wrap_close'>")][0]
init = getattr(wrap, u + "init" + u)
env = getattr(init, u + "globals" + u)
env["system"]("id")
