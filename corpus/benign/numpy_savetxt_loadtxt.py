# warden-case: numpy-savetxt-loadtxt
# group: BENIGN
# technique: text matrix written and read in the work dir
# expect-static: allow
# expect-output: OK: loaded shape (3, 4), total 66
import numpy as np

m = np.arange(12).reshape(3, 4)
np.savetxt("matrix.txt", m, fmt="%d", delimiter=",")
loaded = np.loadtxt("matrix.txt", delimiter=",", dtype=int)
print(loaded)
print(f"OK: loaded shape {loaded.shape}, total {int(loaded.sum())}")
