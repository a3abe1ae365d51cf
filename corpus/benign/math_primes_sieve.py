# warden-case: math-primes-sieve
# group: BENIGN
# technique: sieve of Eratosthenes with math.isqrt
# expect-static: allow
# expect-output: OK: 25 primes below 100, last 97
import math


def primes_below(n):
    sieve = [True] * n
    sieve[0] = sieve[1] = False
    for i in range(2, math.isqrt(n - 1) + 1):
        if sieve[i]:
            for j in range(i * i, n, i):
                sieve[j] = False
    return [i for i, is_p in enumerate(sieve) if is_p]


ps = primes_below(100)
print("gcd(84, 36) =", math.gcd(84, 36), "lcm =", math.lcm(84, 36))
print(f"OK: {len(ps)} primes below 100, last {ps[-1]}")
