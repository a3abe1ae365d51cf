# warden-case: e-exec-dict-dispatch
# group: E
# technique: exec stored in a dispatch dict
# variant: container
# expect-static: deny
# expect-rules: DYN401
# expect-jail: contained
handlers = {"count": len, "run": exec}
handlers["run"]("import os; os.system('id')")
