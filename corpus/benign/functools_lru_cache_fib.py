# warden-case: functools-lru-cache-fib
# group: BENIGN
# technique: memoised recursion with lru_cache
# expect-static: allow
# expect-output: OK: fib(80) = 23416728348467685
from functools import lru_cache


@lru_cache(maxsize=None)
def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)


value = fib(80)
info = fib.cache_info()
print("cache hits:", info.hits)
print(f"OK: fib(80) = {value}")
