# warden-case: b-generator-f-builtins
# group: B
# technique: generator frame f_builtins exposes exec without naming it as a builtin
# variant: plain
# expect-static: deny
# expect-rules: ATTR303
# expect-jail: contained
def probe():
    yield

g = probe()
table = g.gi_frame.f_builtins
table["exec"]("import os; os.system('id')")
