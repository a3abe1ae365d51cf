# warden-case: numpy-save-load-npy
# group: BENIGN
# technique: np.save / np.load in the work dir (no pickle)
# expect-static: allow
# expect-output: OK: roundtrip equal True
import numpy as np

arr = np.arange(12, dtype=np.int64).reshape(3, 4)
np.save("arr.npy", arr)
back = np.load("arr.npy")
print(back.shape, back.dtype)
print(f"OK: roundtrip equal {bool(np.array_equal(arr, back))}")
