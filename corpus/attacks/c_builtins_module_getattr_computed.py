# warden-case: c-builtins-module-getattr-computed
# group: C
# technique: getattr on the builtins module with a name joined at run time
# variant: computed-string
# expect-static: deny
# expect-rules: ATTR304
# expect-jail: contained
# expect-runtime: DYN401
import builtins

name = "".join(["ex", "ec"])
getattr(builtins, name)("import os; os.system('id')")
