# warden-case: a-function-globals-builtins
# group: A
# technique: read __builtins__ out of a user function's __globals__ and import os from there
# variant: plain
# expect-static: deny
# expect-rules: ATTR301
# expect-jail: contained
def helper():
    return 1

b = helper.__globals__["__builtins__"]
imp = b["__import__"] if isinstance(b, dict) else b.__import__
imp("os").system("id")
