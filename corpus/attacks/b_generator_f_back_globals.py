# warden-case: b-generator-f-back-globals
# group: B
# technique: running generator reads gi_frame.f_back.f_globals of its caller and takes __builtins__
# variant: plain
# references: CVE-2023-37271
# expect-static: deny
# expect-rules: ATTR303 ATTR301
# expect-jail: contained
def rows():
    yield g.gi_frame.f_back.f_globals

g = rows()
glb = next(g)
glb["__builtins__"].exec("import os; os.system('id')")
