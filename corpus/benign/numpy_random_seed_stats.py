# warden-case: numpy-random-seed-stats
# group: BENIGN
# technique: seeded generator and summary statistics
# expect-static: allow
# expect-output: OK: mean near zero True, n=10000
import numpy as np

rng = np.random.default_rng(42)
sample = rng.normal(loc=0.0, scale=1.0, size=10_000)
mean = float(sample.mean())
std = float(sample.std())
print(f"mean={mean:.4f} std={std:.4f}")
print("std near one:", abs(std - 1.0) < 0.05)
print(f"OK: mean near zero {abs(mean) < 0.05}, n={sample.size}")
