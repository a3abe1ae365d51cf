# warden-case: numpy-linalg-solve
# group: BENIGN
# technique: solve a linear system
# expect-static: allow
# expect-output: OK: solution [2.0, 3.0]
import numpy as np

A = np.array([[3.0, 1.0], [1.0, 2.0]])
b = np.array([9.0, 8.0])
x = np.linalg.solve(A, b)
residual = np.abs(A @ x - b).max()
print("residual small:", bool(residual < 1e-9))
print(f"OK: solution {[round(float(v), 6) for v in x]}")
