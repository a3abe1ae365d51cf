# warden-case: scipy-cubic-spline
# group: BENIGN
# technique: cubic spline interpolation
# expect-static: allow
# expect-output: OK: spline(2.5) = 6.25
import numpy as np
from scipy.interpolate import CubicSpline

x = np.arange(5, dtype=float)
y = x ** 2
spline = CubicSpline(x, y)
print("derivative at 2:", round(float(spline(2.0, 1)), 3))
print(f"OK: spline(2.5) = {float(spline(2.5)):.2f}")
