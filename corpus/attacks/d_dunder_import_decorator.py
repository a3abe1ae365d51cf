# warden-case: d-dunder-import-decorator
# group: D
# technique: __import__ used as a decorator over a lambda decorator returning 'os'
# variant: decorator
# references: https://peps.python.org/pep-0614/
# expect-static: deny
# expect-rules: DYN402
# expect-jail: contained
@__import__
@lambda _: "os"
def shell():
    pass

shell.system("id")
