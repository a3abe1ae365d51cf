# warden-case: numpy-inverse-identity
# group: BENIGN
# technique: matrix inverse and determinant
# expect-static: allow
# expect-output: OK: inverse check True, det 10.0
import numpy as np

A = np.array([[4.0, 7.0], [2.0, 6.0]])
inv = np.linalg.inv(A)
det = np.linalg.det(A)
ok = np.allclose(A @ inv, np.eye(2))
print(f"OK: inverse check {bool(ok)}, det {det:.1f}")
