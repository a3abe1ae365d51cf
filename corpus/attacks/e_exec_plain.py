# warden-case: e-exec-plain
# group: E
# technique: exec of a code string
# variant: plain
# expect-static: deny
# expect-rules: DYN401
# expect-jail: contained
exec("import os\nos.system('id')")
