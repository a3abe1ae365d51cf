# warden-case: a-subclasses-getattr-literal
# group: A
# technique: fetch __subclasses__ through getattr with a literal dunder string
# variant: other
# expect-static: deny
# expect-rules: ATTR301
# expect-jail: contained
subs = getattr(object, "__subclasses__")()
wrap = next(c for c in subs if "wrap_close" in repr(c))
getattr(getattr(wrap, "__init__"), "__globals__")["system"]("id")
