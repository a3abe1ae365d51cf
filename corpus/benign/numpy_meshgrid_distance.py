# warden-case: numpy-meshgrid-distance
# group: BENIGN
# technique: meshgrid and distances from the centre
# expect-static: allow
# expect-output: OK: max distance 1.414
import numpy as np

xs = np.linspace(-1, 1, 3)
gx, gy = np.meshgrid(xs, xs)
dist = np.sqrt(gx ** 2 + gy ** 2)
print(np.round(dist, 3))
print(f"OK: max distance {dist.max():.3f}")
