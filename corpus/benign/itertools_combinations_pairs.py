# warden-case: itertools-combinations-pairs
# group: BENIGN
# technique: combinations, permutations and product
# expect-static: allow
# expect-output: OK: 6 pairs, 24 orderings, 8 bitstrings
from itertools import accumulate, combinations, permutations, product

people = ["ana", "ben", "cy", "di"]
pairs = list(combinations(people, 2))
orders = list(permutations(people))
bits = ["".join(p) for p in product("01", repeat=3)]
running = list(accumulate([3, 1, 4, 1, 5]))
print("first pair:", pairs[0], "running totals:", running)
print(f"OK: {len(pairs)} pairs, {len(orders)} orderings, {len(bits)} bitstrings")
