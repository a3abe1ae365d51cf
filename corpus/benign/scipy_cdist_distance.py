# warden-case: scipy-cdist-distance
# group: BENIGN
# technique: pairwise distances
# expect-static: allow
# expect-output: OK: distance matrix [[0.0, 5.0], [5.0, 0.0]]
import numpy as np
from scipy.spatial.distance import cdist

pts = np.array([[0.0, 0.0], [3.0, 4.0]])
d = cdist(pts, pts)
print(f"OK: distance matrix {d.tolist()}")
