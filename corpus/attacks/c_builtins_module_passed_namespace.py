# warden-case: c-builtins-module-passed-namespace
# group: C
# technique: the builtins module passed to a function that reads its __dict__ (allowed on an unknown object) and takes exec by a computed key
# variant: value-passing
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained
# expect-runtime: DYN401
import builtins


def namespace(module):
    return module.__dict__


namespace(builtins)["ex" + "ec"]("import os; os.system('id')")
