# warden-case: numpy-einsum-matmul
# group: BENIGN
# technique: einsum versus matmul
# expect-static: allow
# expect-output: OK: einsum matches matmul True
import numpy as np

rng = np.random.default_rng(0)
a = rng.random((4, 3))
b = rng.random((3, 5))
via_einsum = np.einsum("ij,jk->ik", a, b)
via_matmul = a @ b
trace = np.einsum("ii->", np.eye(4))
print("trace of identity:", float(trace))
print(f"OK: einsum matches matmul {bool(np.allclose(via_einsum, via_matmul))}")
