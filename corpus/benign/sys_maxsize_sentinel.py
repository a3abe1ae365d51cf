# warden-case: sys-maxsize-sentinel
# group: BENIGN
# technique: sys.maxsize and sys.float_info as sentinels in a min search
# expect-static: allow
# expect-output: OK: cheapest route costs 7
import sys

costs = {"a": 12, "b": 7, "c": 9}
best = sys.maxsize
for route, cost in costs.items():
    best = min(best, cost)
assert sys.float_info.epsilon < 1e-10
print(f"OK: cheapest route costs {best}")
