# warden-case: g-session-plant-pickle-then-load
# group: G
# technique: a session writes a hand-made pickle (a reduce of os.system) in one cell and reads it with pandas in a later cell
# variant: other
# session: cells
# expect-static: deny
# expect-rules: REF201
# expect-runtime: DES804
# expect-jail: contained
# %% plant
payload = b"cposix\nsystem\n(S'id > /work/warden-escape-pickle'\ntR."
with open("frame.pkl", "wb") as handle:
    handle.write(payload)
# %% load
import pandas as pd
frame = pd.read_pickle("frame.pkl")
