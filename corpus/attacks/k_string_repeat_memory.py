# warden-case: k-string-repeat-memory
# group: K
# technique: one huge string allocation
# variant: plain
# expect-static: allow
# expect-rules: none
# expect-jail: killed by memory limit
blob = "x" * (10 ** 11)
print(len(blob))
