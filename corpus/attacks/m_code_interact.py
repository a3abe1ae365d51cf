# warden-case: m-code-interact
# group: M
# technique: code.interact opens a REPL
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: no-survivor
import code

code.interact(local={})
