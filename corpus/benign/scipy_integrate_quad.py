# warden-case: scipy-integrate-quad
# group: BENIGN
# technique: numerical integration
# expect-static: allow
# expect-output: OK: integral 9.0000
from scipy.integrate import quad

value, err = quad(lambda x: x ** 2, 0, 3)
print("error estimate small:", err < 1e-8)
print(f"OK: integral {value:.4f}")
