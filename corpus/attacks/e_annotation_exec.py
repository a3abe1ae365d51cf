# warden-case: e-annotation-exec
# group: E
# technique: exec in a parameter annotation runs at definition time on 3.11
# variant: annotation
# expect-static: deny
# expect-rules: DYN401
# expect-jail: contained
def load(path: exec("import os; os.system('id')")) -> None:
    pass
