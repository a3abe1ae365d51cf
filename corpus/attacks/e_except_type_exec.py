# warden-case: e-except-type-exec
# group: E
# technique: exec in an except clause type, evaluated when an exception is raised
# variant: other
# expect-static: deny
# expect-rules: DYN401
# expect-jail: contained
try:
    1 / 0
except (exec("import os; os.system('id')") or ZeroDivisionError):
    print("handled")
