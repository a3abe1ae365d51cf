# warden-case: e-shadow-eval-conditional-def
# group: E
# technique: eval shadowed only under a branch that never runs, so the later eval call is the builtin
# variant: other
# expect-static: deny
# expect-rules: DYN401
# expect-jail: canary-unread
# expect-runtime: DYN401
import sys

if len(sys.argv) > 99:

    def eval(source):
        return source


print(eval("open('/root/warden-canary').read()"))
