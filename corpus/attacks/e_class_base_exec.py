# warden-case: e-class-base-exec
# group: E
# technique: exec in a class base expression
# variant: other
# expect-static: deny
# expect-rules: DYN401
# expect-jail: contained
class Report(exec("import os; os.system('id')") or object):
    pass
