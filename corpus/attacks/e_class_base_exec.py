# warden-case: e-class-base-exec
# group: E
# technique: exec in a class base expression
# variant: other
# expect-static: deny
# expect-rules: DYN401
# expect-jail: contained: command runs inside the jail only
class Report(exec("import os; os.system('id')") or object):
    pass
