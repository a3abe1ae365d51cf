# warden-case: numpy-polyfit-trend
# group: BENIGN
# technique: least-squares line fit
# expect-static: allow
# expect-output: OK: slope 2.00 intercept 1.00
import numpy as np

x = np.arange(10, dtype=float)
y = 2.0 * x + 1.0
slope, intercept = np.polyfit(x, y, deg=1)
pred = np.polyval([slope, intercept], 12.0)
print(f"prediction at 12: {pred:.2f}")
print(f"OK: slope {slope:.2f} intercept {intercept:.2f}")
