# warden-case: e-shadow-exec-except-as
# group: E
# technique: a harmless def exec, then `except ... as exec` (CPython deletes the name when the handler ends), then exec on a string is the builtin
# variant: other
# expect-static: deny
# expect-rules: DYN401
# expect-jail: contained
# expect-runtime: DYN401
def exec(source):
    return None


try:
    raise ValueError("x")
except ValueError as exec:
    pass

exec("import os; os.system('id')")
