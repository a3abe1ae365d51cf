# warden-case: c-match-class-pattern
# group: C
# technique: match class-pattern keywords perform attribute lookups (__class__, __base__)
# variant: match-pattern
# expect-static: deny
# expect-rules: ATTR301
# expect-jail: contained
match ():
    case object(__class__=cls):
        pass

match cls:
    case type(__base__=root):
        pass

for sub in root.__subclasses__():
    if "wrap_close" in repr(sub):
        sub.__init__.__globals__["system"]("id")
