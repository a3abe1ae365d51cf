# warden-case: g-rt-numpy-load-positional-allow-pickle
# group: G
# technique: np.load with allow_pickle given positionally unpickles a reference to os.system
# variant: other
# expect-static: allow
# expect-rules: none
# expect-jail: contained
# expect-runtime: DES804
import numpy as np

with open("payload.npy", "wb") as fh:
    fh.write(b"cposix\nsystem\n(S'id'\ntR.")
print(np.load("payload.npy", None, True))
