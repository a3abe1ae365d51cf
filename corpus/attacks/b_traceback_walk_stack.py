# warden-case: b-traceback-walk-stack
# group: B
# technique: traceback.walk_stack yields live frames with f_globals
# variant: plain
# expect-static: deny
# expect-rules: IMP101 ATTR303
# expect-jail: contained
import traceback

for frame, _ in traceback.walk_stack(None):
    frame.f_globals["__builtins__"].exec("import os; os.system('id')")
    break
