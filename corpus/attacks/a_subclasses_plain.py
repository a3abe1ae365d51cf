# warden-case: a-subclasses-plain
# group: A
# technique: walk ().__class__.__base__.__subclasses__() to os._wrap_close and call system from its __init__.__globals__
# variant: plain
# expect-static: deny
# expect-rules: ATTR301
# expect-jail: contained
for cls in ().__class__.__base__.__subclasses__():
    if cls.__name__ == "_wrap_close":
        cls.__init__.__globals__["system"]("id")
        break
