# warden-case: e-shadow-eval-class-body-del
# group: E
# technique: a class body binds eval and deletes it again, so the class body's eval call falls back to the builtin
# variant: other
# expect-static: deny
# expect-rules: DYN401
# expect-jail: canary-unread
# expect-runtime: DYN401
class Report:
    eval = staticmethod(len)
    del eval
    secret = eval("open('/root/warden-canary').read()")

print(Report.secret)
