# warden-case: b-async-generator-ag-frame
# group: B
# technique: async generator ag_frame.f_builtins gives eval
# variant: plain
# expect-static: deny
# expect-rules: ATTR303
# expect-jail: contained
async def stream():
    yield 1

ag = stream()
fb = ag.ag_frame.f_builtins
fb["eval"]("__import__('os').system('id')")
