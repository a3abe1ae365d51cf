# warden-case: e-code-interpreter-runsource
# group: E
# technique: code.InteractiveInterpreter().runsource executes a string
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained: command runs inside the jail only
import code

code.InteractiveInterpreter().runsource("import os; os.system('id')")
