# warden-case: numpy-histogram-counts
# group: BENIGN
# technique: histogram with explicit bin edges
# expect-static: allow
# expect-output: OK: counts [1, 2, 3, 4]
import numpy as np

data = np.array([1, 2, 2, 3, 3, 3, 4, 4, 4, 4])
counts, edges = np.histogram(data, bins=[1, 2, 3, 4, 5])
print("edges:", edges.tolist())
print(f"OK: counts {counts.tolist()}")
