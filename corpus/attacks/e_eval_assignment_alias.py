# warden-case: e-eval-assignment-alias
# group: E
# technique: eval bound to an innocent name
# variant: assignment-alias
# expect-static: deny
# expect-rules: DYN401
# expect-jail: contained
compute = eval
compute("__import__('os').system('id')")
