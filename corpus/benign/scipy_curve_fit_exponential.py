# warden-case: scipy-curve-fit-exponential
# group: BENIGN
# technique: curve_fit of an exponential model
# expect-static: allow
# expect-output: OK: fitted a=2.00 b=0.50
import numpy as np
from scipy.optimize import curve_fit


def model(x, a, b):
    return a * np.exp(b * x)


x = np.linspace(0, 4, 20)
y = model(x, 2.0, 0.5)
params, _ = curve_fit(model, x, y, p0=(1.0, 0.1))
print(f"OK: fitted a={params[0]:.2f} b={params[1]:.2f}")
