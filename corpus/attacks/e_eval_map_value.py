# warden-case: e-eval-map-value
# group: E
# technique: eval passed as a value to map
# variant: value-passing
# expect-static: deny
# expect-rules: DYN401
# expect-jail: contained
results = list(map(eval, ["1 + 1", "__import__('os').system('id')"]))
print(results)
