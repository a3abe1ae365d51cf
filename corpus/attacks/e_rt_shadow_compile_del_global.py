# warden-case: e-rt-shadow-compile-del-global
# group: E
# technique: compile shadowed by a def in a function, the global deleted through globals(), then compile and exec of a string
# variant: other
# expect-static: deny
# expect-rules: DYN401 DYN403
# expect-runtime: DYN401
# expect-jail: contained
def compile(*args):
    return None
del globals()["compile"]
code = compile("import os; os.system('id')", "<x>", "exec")
exec(code)
