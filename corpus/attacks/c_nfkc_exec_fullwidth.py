# warden-case: c-nfkc-exec-fullwidth
# group: C
# technique: fullwidth letters that CPython NFKC-normalises to exec
# variant: unicode-lookalike
# references: https://peps.python.org/pep-3131/
# expect-static: deny
# expect-rules: DYN401
# expect-jail: contained
ｅｘｅｃ("import os; os.system('id')")
