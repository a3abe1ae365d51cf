# warden-case: e-default-value-exec
# group: E
# technique: exec in a default value runs when the function is merely defined
# variant: default-value
# references: CVE-2025-3248
# expect-static: deny
# expect-rules: DYN401
# expect-jail: contained
def validate(code, _check=exec("import os; os.system('id')")):
    return code
