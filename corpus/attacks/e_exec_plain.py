# warden-case: e-exec-plain
# group: E
# technique: exec of a code string
# variant: plain
# expect-static: deny
# expect-rules: DYN401
# expect-jail: contained: command runs inside the jail only
exec("import os\nos.system('id')")
