# warden-case: e-rt-builtins-dict-computed-exec
# group: E
# technique: exec found in the builtins module's namespace by a computed key
# variant: computed-string
# expect-static: deny
# expect-rules: ATTR301 IMP101
# expect-jail: contained
# expect-runtime: DYN401
import builtins

run = builtins.__dict__["ex" + "ec"]
run("print(1)")
