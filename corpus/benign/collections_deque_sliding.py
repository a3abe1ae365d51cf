# warden-case: collections-deque-sliding
# group: BENIGN
# technique: sliding window maximum with deque
# expect-static: allow
# expect-output: OK: window maxima [3, 3, 5, 5, 6, 7]
from collections import deque


def window_max(values, k):
    dq = deque()
    out = []
    for i, v in enumerate(values):
        while dq and values[dq[-1]] <= v:
            dq.pop()
        dq.append(i)
        if dq[0] <= i - k:
            dq.popleft()
        if i >= k - 1:
            out.append(values[dq[0]])
    return out


print(f"OK: window maxima {window_max([1, 3, -1, -3, 5, 3, 6, 7], 3)}")
