# warden-case: e-session-eval-alias-across-cells
# group: E
# technique: a session stores eval in a dict in one cell, assembles source in another and calls it in a third
# variant: container
# session: cells
# expect-static: deny
# expect-rules: DYN401
# expect-runtime: DYN401
# expect-jail: contained
# %% store
tools = {"run": eval}
# %% source
source = "__imp" + "ort__('os').system('id')"
# %% call
tools["run"](source)
