# warden-case: b-frame-getattr-computed
# group: B
# technique: reach gi_frame and f_builtins with getattr and run-time built names
# variant: computed-string
# expect-static: deny
# expect-rules: ATTR304
# expect-jail: contained
def gen():
    yield

g = gen()
frame = getattr(g, "".join(["gi", "_", "frame"]))
table = getattr(frame, "".join(["f", "_", "builtins"]))
table["exec"]("import os; os.system('id')")
