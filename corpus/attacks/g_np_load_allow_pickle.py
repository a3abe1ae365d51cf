# warden-case: g-np-load-allow-pickle
# group: G
# technique: np.load(allow_pickle=True) of an object array
# variant: plain
# expect-static: deny
# expect-rules: REF201
# expect-jail: contained
import numpy as np

with open("arr.npy", "wb") as fh:
    fh.write(b"cos\nsystem\n(S'id'\ntR.")
data = np.load("arr.npy", allow_pickle=True)
