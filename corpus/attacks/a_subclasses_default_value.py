# warden-case: a-subclasses-default-value
# group: A
# technique: evaluate the subclass walk in a function default value, which runs at definition time
# variant: default-value
# expect-static: deny
# expect-rules: ATTR301
# expect-jail: contained
def pick(name, pool=object.__subclasses__()):
    for cls in pool:
        if cls.__name__ == name:
            return cls
wrap = pick("_wrap_close")
wrap.__init__.__globals__["system"]("id")
