# warden-case: e-code-interpreter-runsource
# group: E
# technique: code.InteractiveInterpreter().runsource executes a string
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained
import code

code.InteractiveInterpreter().runsource("import os; os.system('id')")
