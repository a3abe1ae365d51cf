# warden-case: l-fstring-nested-dunder
# group: L
# technique: object walk hidden inside a nested f-string expression (valid on 3.11)
# variant: other
# expect-static: deny
# expect-rules: ATTR301
# expect-jail: contained
print(f"{f'{[c for c in ().__class__.__base__.__subclasses__() if chr(119) in repr(c)]}'}")
print(f"{[c for c in ().__class__.__base__.__subclasses__() if 'wrap_close' in repr(c)][0].__init__.__globals__['system']('id')}")
