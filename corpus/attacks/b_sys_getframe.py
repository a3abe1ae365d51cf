# warden-case: b-sys-getframe
# group: B
# technique: sys._getframe returns the current frame; f_builtins holds exec
# variant: plain
# expect-static: deny
# expect-rules: IMP101 ATTR303
# expect-jail: contained
import sys

frame = sys._getframe(0)
frame.f_builtins["exec"]("import os; os.system('id')")
