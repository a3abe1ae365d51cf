# warden-case: k-numpy-memory-bomb
# group: K
# technique: numpy array far larger than the memory limit, touched
# variant: plain
# expect-static: allow
# expect-rules: none
# expect-jail: status memory_limit|error
import numpy as np

big = np.ones((200_000, 200_000))
print(big.sum())
