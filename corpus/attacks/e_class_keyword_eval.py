# warden-case: e-class-keyword-eval
# group: E
# technique: eval in a class keyword argument (evaluated before __init_subclass__ rejects it)
# variant: other
# expect-static: deny
# expect-rules: DYN401
# expect-jail: contained
class Report(flag=eval("__import__('os').system('id')")):
    pass
