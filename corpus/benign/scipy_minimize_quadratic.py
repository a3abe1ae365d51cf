# warden-case: scipy-minimize-quadratic
# group: BENIGN
# technique: unconstrained minimisation
# expect-static: allow
# expect-output: OK: minimum at (3.00, -1.00)
import numpy as np
from scipy.optimize import minimize


def loss(v):
    x, y = v
    return (x - 3) ** 2 + (y + 1) ** 2 + 0.5


res = minimize(loss, x0=np.zeros(2), method="BFGS")
print("converged:", bool(res.success), f"value {res.fun:.3f}")
print(f"OK: minimum at ({res.x[0]:.2f}, {res.x[1]:.2f})")
