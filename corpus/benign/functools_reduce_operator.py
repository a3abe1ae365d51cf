# warden-case: functools-reduce-operator
# group: BENIGN
# technique: functools.reduce with operator functions
# expect-static: allow
# expect-output: OK: product 3628800, max 10
import operator
from functools import partial, reduce

nums = list(range(1, 11))
product = reduce(operator.mul, nums, 1)
total = reduce(operator.add, nums)
largest = reduce(max, nums)
double = partial(operator.mul, 2)
print("total:", total, "doubled:", [double(n) for n in nums[:3]])
print(f"OK: product {product}, max {largest}")
