# warden-case: m-sys-settrace
# group: M
# technique: sys.settrace tracer sees every frame
# variant: plain
# expect-static: deny
# expect-rules: IMP101 ATTR303
# expect-jail: contained
import sys


def tracer(frame, event, arg):
    frame.f_builtins["exec"]("import os; os.system('id')")
    sys.settrace(None)


sys.settrace(tracer)
print(sum(range(3)))
