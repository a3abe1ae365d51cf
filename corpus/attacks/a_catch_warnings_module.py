# warden-case: a-catch-warnings-module
# group: A
# technique: classic walk to warnings.catch_warnings and its _module attribute holding builtins
# variant: plain
# expect-static: deny
# expect-rules: ATTR301
# expect-jail: contained
cw = [c for c in ().__class__.__base__.__subclasses__() if c.__name__ == "catch_warnings"][0]
mod = cw()._module
mod.__builtins__["__import__"]("os").system("id")
