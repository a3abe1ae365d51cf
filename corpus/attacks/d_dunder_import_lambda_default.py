# warden-case: d-dunder-import-lambda-default
# group: D
# technique: __import__ evaluated as a lambda default value
# variant: default-value
# references: CVE-2023-44467
# expect-static: deny
# expect-rules: DYN402
# expect-jail: contained
run = lambda cmd, m=__import__("subprocess"): m.getoutput(cmd)
print(run("id"))
