# warden-case: b-session-generator-frame-across-cells
# group: B
# technique: a session keeps a generator in one cell and walks its frame to the module globals in later cells
# variant: other
# session: cells
# expect-static: deny
# expect-rules: ATTR303
# expect-runtime: ATTR303
# expect-jail: contained
# %% generator
def numbers():
    yield 1
gen = numbers()
# %% frame
frame = gen.gi_frame
# %% walk
frame.f_globals["__builtins__"]
