# warden-case: d-session-bind-module-then-use
# group: D
# technique: a session binds os under another name in one cell and calls os.system through it in a later cell
# variant: assignment-alias
# session: cells
# expect-static: deny
# expect-rules: IMP101
# expect-runtime: PROC801
# expect-jail: contained
# %% bind
import os as tools
# %% harmless cell between
total = sum(range(10))
# %% use
tools.system("id > /work/warden-escape-session")
