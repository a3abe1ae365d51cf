# warden-case: numpy-broadcasting-normalize
# group: BENIGN
# technique: min-max normalisation with broadcasting
# expect-static: allow
# expect-output: OK: column mins [0.0, 0.0] maxs [1.0, 1.0]
import numpy as np

X = np.array([[1.0, 10.0], [2.0, 20.0], [3.0, 30.0]])
lo = X.min(axis=0)
hi = X.max(axis=0)
scaled = (X - lo) / (hi - lo)
print(scaled)
mins = [float(v) for v in scaled.min(axis=0)]
maxs = [float(v) for v in scaled.max(axis=0)]
print(f"OK: column mins {mins} maxs {maxs}")
