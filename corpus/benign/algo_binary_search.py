# warden-case: algo-binary-search
# group: BENIGN
# technique: binary search and two-sum (interview-style)
# expect-static: allow
# expect-output: OK: found 23 at 5, two-sum (1, 3)
def binary_search(xs, target):
    lo, hi = 0, len(xs) - 1
    while lo <= hi:
        mid = (lo + hi) // 2
        if xs[mid] == target:
            return mid
        if xs[mid] < target:
            lo = mid + 1
        else:
            hi = mid - 1
    return -1


def two_sum(nums, target):
    seen = {}
    for i, n in enumerate(nums):
        if target - n in seen:
            return seen[target - n], i
        seen[n] = i
    return None


data = [2, 5, 8, 12, 16, 23, 38, 56]
print("missing:", binary_search(data, 7))
print(f"OK: found 23 at {binary_search(data, 23)}, two-sum {two_sum([3, 2, 9, 4], 6)}")
