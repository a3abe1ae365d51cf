# warden-case: numpy-where-clip
# group: BENIGN
# technique: np.where and np.clip
# expect-static: allow
# expect-output: OK: relu sum 9, clipped [-1, -1, 0, 1, 1]
import numpy as np

x = np.array([-3, -1, 0, 4, 5])
relu = np.where(x < 0, 0, x)
clipped = np.clip(x, -1, 1)
print(f"OK: relu sum {int(relu.sum())}, clipped {clipped.tolist()}")
