# warden-case: e-session-shadow-exec-then-delete
# group: E
# technique: a session shadows exec with a harmless def, deletes it in a later cell, then calls exec on a string
# variant: other
# session: cells
# expect-static: deny
# expect-rules: DYN401
# expect-runtime: DYN401
# expect-jail: contained
# %% shadow
def exec(text):
    return text
# %% unshadow
del exec
# %% call
exec("import os; os.system('id')")
