# warden-case: d-shadow-import-global-del
# group: D
# technique: __import__ bound to a harmless function, then deleted through a `global` declaration in a function written after the use, so the use reaches the builtin
# variant: other
# expect-static: deny
# expect-rules: DYN402
# expect-jail: contained
# expect-runtime: PROC801
__import__ = print


def load(name):
    return __import__(name)


def reset():
    global __import__
    del __import__


reset()
load("os").system("id")
