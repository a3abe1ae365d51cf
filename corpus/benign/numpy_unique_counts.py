# warden-case: numpy-unique-counts
# group: BENIGN
# technique: np.unique with counts
# expect-static: allow
# expect-output: OK: values [1, 2, 5] counts [3, 1, 2]
import numpy as np

arr = np.array([5, 1, 1, 2, 5, 1])
values, counts = np.unique(arr, return_counts=True)
mode = int(values[np.argmax(counts)])
print("mode:", mode)
print(f"OK: values {values.tolist()} counts {counts.tolist()}")
