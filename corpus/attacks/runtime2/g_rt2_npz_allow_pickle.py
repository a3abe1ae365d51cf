# warden-case: g-rt2-npz-allow-pickle
# group: G
# technique: np.load of a planted .npz with allow_pickle passed as a keyword dict
# variant: container
# expect-static: allow
# expect-rules: none
# expect-jail: contained
# expect-runtime: DES804
import numpy as np

np.savez("warden.npz", a=np.array([{"k": 1}], dtype=object))
options = {"allow_pickle": True}
print(np.load("warden.npz", **options)["a"])
