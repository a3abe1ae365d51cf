# warden-case: numpy-argsort-topk
# group: BENIGN
# technique: top-k indices with argsort
# expect-static: allow
# expect-output: OK: top3 indices [4, 1, 3]
import numpy as np

scores = np.array([0.2, 0.9, 0.1, 0.7, 0.95, 0.3])
order = np.argsort(scores)[::-1]
top3 = order[:3]
print("top scores:", [float(s) for s in scores[top3]])
print(f"OK: top3 indices {top3.tolist()}")
