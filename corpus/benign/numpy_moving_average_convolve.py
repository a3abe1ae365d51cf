# warden-case: numpy-moving-average-convolve
# group: BENIGN
# technique: moving average via convolution
# expect-static: allow
# expect-output: OK: moving average [2.0, 3.0, 4.0, 5.0]
import numpy as np

values = np.arange(1, 7, dtype=float)
window = np.ones(3) / 3
avg = np.convolve(values, window, mode="valid")
print(f"OK: moving average {[round(float(v), 6) for v in avg]}")
