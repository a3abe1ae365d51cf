# warden-case: numpy-boolean-mask
# group: BENIGN
# technique: boolean masks and aggregation
# expect-static: allow
# expect-output: OK: 10 evens summing to 110
import numpy as np

nums = np.arange(1, 21)
evens = nums[nums % 2 == 0]
big_odds = nums[(nums % 2 == 1) & (nums > 15)]
print("big odds:", big_odds.tolist())
print(f"OK: {evens.size} evens summing to {int(evens.sum())}")
