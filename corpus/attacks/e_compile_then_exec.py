# warden-case: e-compile-then-exec
# group: E
# technique: compile() a string and exec the code object
# variant: plain
# expect-static: deny
# expect-rules: DYN401
# expect-jail: contained
src = "import os\nos.system('id')"
code = compile(src, "<cell>", "exec")
exec(code)
