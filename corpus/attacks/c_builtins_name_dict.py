# warden-case: c-builtins-name-dict
# group: C
# technique: __builtins__.__dict__ gives eval under a string key
# variant: container
# expect-static: deny
# expect-rules: ATTR301
# expect-jail: contained
table = __builtins__.__dict__
table["eval"]("__import__('os').system('id')")
