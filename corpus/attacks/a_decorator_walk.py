# warden-case: a-decorator-walk
# group: A
# technique: hide the object walk in a decorator expression (a call with no call node at the use site)
# variant: decorator
# expect-static: deny
# expect-rules: ATTR301
# expect-jail: contained
@lambda f: [c for c in ().__class__.__base__.__subclasses__() if "wrap_close" in repr(c)][0]
def helper():
    pass

helper.__init__.__globals__["system"]("id")
