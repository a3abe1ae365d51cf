# warden-case: getattr-numpy-reducers
# group: BENIGN
# technique: numpy reducers chosen by name from a literal list
# expect-static: allow
# expect-output: OK: amin=1 amax=9
import numpy as np

data = np.array([4, 9, 1, 7])
found = {name: int(getattr(np, name)(data)) for name in ["amin", "amax"]}
print(f"OK: amin={found['amin']} amax={found['amax']}")
