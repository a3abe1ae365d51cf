# warden-case: e-rt-shadowed-exec-deleted
# group: E
# technique: exec shadowed by a def and deleted again, then called on a string
# variant: other
# expect-static: deny
# expect-rules: DYN401
# expect-jail: contained
# expect-runtime: DYN401
def exec(code):
    return None


del exec
exec("import os; os.system('id')")
