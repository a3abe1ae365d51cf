# warden-case: e-decorator-exec-format
# group: E
# technique: @exec over @'...'.format: decorators are calls with no call node
# variant: decorator
# references: CVE-2025-3248
# expect-static: deny
# expect-rules: DYN401
# expect-jail: contained
@exec
@"import os; os.system('id')".format
def cell():
    pass
