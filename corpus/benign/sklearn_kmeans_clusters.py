# warden-case: sklearn-kmeans-clusters
# group: BENIGN
# technique: KMeans on well separated blobs
# expect-static: allow
# expect-output: OK: cluster sizes [5, 5, 5]
import numpy as np
from sklearn.cluster import KMeans

rng = np.random.default_rng(0)
centres = np.array([[0, 0], [10, 10], [-10, 10]])
points = np.vstack([c + rng.normal(0, 0.3, size=(5, 2)) for c in centres])

km = KMeans(n_clusters=3, n_init=10, random_state=0).fit(points)
sizes = sorted(np.bincount(km.labels_).tolist())
print("inertia small:", km.inertia_ < 10)
print(f"OK: cluster sizes {sizes}")
