# warden-case: j-module-value-sys-parameter
# group: J
# technique: sys passed to a function whose parameter reaches sys.modules and os from it
# variant: value-passing
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained
# expect-runtime: PROC801
import sys


def lookup(table, name):
    return table.modules[name]


lookup(sys, "os").system("id")
