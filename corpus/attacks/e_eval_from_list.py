# warden-case: e-eval-from-list
# group: E
# technique: eval pulled out of a list literal
# variant: container
# expect-static: deny
# expect-rules: DYN401
# expect-jail: contained
tools = [len, sum, eval]
tools[-1]("__import__('os').system('id')")
