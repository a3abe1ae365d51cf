# warden-case: m-code-interact
# group: M
# technique: code.interact opens a REPL
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: no interactive shell (stdin closed)
import code

code.interact(local={})
