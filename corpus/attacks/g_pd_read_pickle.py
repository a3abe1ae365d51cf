# warden-case: g-pd-read-pickle
# group: G
# technique: pd.read_pickle of a file written by the program
# variant: plain
# expect-static: deny
# expect-rules: REF201
# expect-jail: contained
import pandas as pd

with open("cache.pkl", "wb") as fh:
    fh.write(b"cos\nsystem\n(S'id'\ntR.")
df = pd.read_pickle("cache.pkl")
