# warden-case: c-globals-builtins
# group: C
# technique: globals()['__builtins__'] reaches exec
# variant: plain
# expect-static: deny
# expect-rules: DYN403 ATTR301
# expect-jail: contained
b = globals()["__builtins__"]
b.exec("import os; os.system('id')")
