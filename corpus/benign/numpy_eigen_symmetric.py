# warden-case: numpy-eigen-symmetric
# group: BENIGN
# technique: eigenvalues of a symmetric matrix
# expect-static: allow
# expect-output: OK: eigenvalues [1.0, 3.0]
import numpy as np

M = np.array([[2.0, 1.0], [1.0, 2.0]])
values, vectors = np.linalg.eigh(M)
check = np.allclose(M @ vectors, vectors * values)
print("decomposition consistent:", bool(check))
print(f"OK: eigenvalues {[round(float(v), 6) for v in values]}")
