# warden-case: b-inspect-currentframe
# group: B
# technique: inspect.currentframe().f_globals
# variant: plain
# expect-static: deny
# expect-rules: IMP101 ATTR303
# expect-jail: contained
import inspect

glb = inspect.currentframe().f_globals
glb["__builtins__"].exec("import os; os.system('id')")
