# warden-case: c-locals-builtins
# group: C
# technique: locals() at module level is the module namespace
# variant: plain
# expect-static: deny
# expect-rules: DYN403 ATTR301
# expect-jail: contained
ns = locals()
ns["__builtins__"].eval("__import__('os').system('id')")
