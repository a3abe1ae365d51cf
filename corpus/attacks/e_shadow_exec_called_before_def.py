# warden-case: e-shadow-exec-called-before-def
# group: E
# technique: a function calls exec and runs before the module defines its own exec, so it reaches the builtin
# variant: other
# expect-static: deny
# expect-rules: DYN401
# expect-jail: contained
# expect-runtime: DYN401
def run(source):
    return exec(source)


run("import os; os.system('id')")


def exec(source):
    return source
