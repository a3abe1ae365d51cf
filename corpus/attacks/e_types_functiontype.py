# warden-case: e-types-functiontype
# group: E
# technique: build a function from a compiled code object with types.FunctionType
# variant: other
# expect-static: deny
# expect-rules: IMP101 DYN401
# expect-jail: contained
import types

code = compile("import os; os.system('id')", "<cell>", "exec")
fn = types.FunctionType(code, {})
fn()
