# warden-case: d-session-import-function-stored
# group: D
# technique: a session stores __import__ under a harmless name, and a later cell imports ctypes through it and loads libc
# variant: assignment-alias
# session: cells
# expect-static: deny
# expect-rules: DYN402
# expect-runtime: IMP101
# expect-jail: contained
# %% store
loader = __import__
# %% use
native = loader("ctypes")
native.CDLL(None).system(b"id")
