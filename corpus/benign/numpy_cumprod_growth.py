# warden-case: numpy-cumprod-growth
# group: BENIGN
# technique: compound growth with cumprod
# expect-static: allow
# expect-output: OK: final multiplier 1.188
import numpy as np

rates = np.array([0.10, 0.20, -0.10])
path = np.cumprod(1 + rates)
print("path:", [round(float(v), 3) for v in path])
print(f"OK: final multiplier {path[-1]:.3f}")
