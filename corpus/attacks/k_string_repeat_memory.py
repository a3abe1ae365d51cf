# warden-case: k-string-repeat-memory
# group: K
# technique: one huge string allocation
# variant: plain
# expect-static: allow
# expect-rules: none
# expect-jail: status memory_limit|error
blob = "x" * (10 ** 11)
print(len(blob))
