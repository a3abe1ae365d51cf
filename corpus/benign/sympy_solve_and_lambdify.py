# warden-case: sympy-solve-and-lambdify
# group: BENIGN
# technique: sympy solves a quadratic and lambdifies an expression for numpy
# expect-static: allow
# expect-output: OK: roots [2, 3], derivative x*cos(x) + sin(x), values [1.0, 2.0, 5.0]
import numpy as np
import sympy as sp

x = sp.symbols("x")
roots = sp.solve(x**2 - 5 * x + 6, x)
derivative = sp.diff(sp.sin(x) * x, x)
f = sp.lambdify(x, x**2 + 1, "numpy")
values = f(np.array([0.0, 1.0, 2.0]))
print(f"OK: roots {sorted(roots)}, derivative {derivative}, values {values.tolist()}")
