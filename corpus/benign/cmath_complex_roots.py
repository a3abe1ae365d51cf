# warden-case: cmath-complex-roots
# group: BENIGN
# technique: complex roots of a quadratic with cmath
# expect-static: allow
# expect-output: OK: roots (-1+2j) and (-1-2j)
import cmath


def roots(a, b, c):
    d = cmath.sqrt(b * b - 4 * a * c)
    return (-b + d) / (2 * a), (-b - d) / (2 * a)


r1, r2 = roots(1, 2, 5)
print("modulus:", round(abs(r1), 4), "phase:", round(cmath.phase(r1), 4))
print(f"OK: roots {r1} and {r2}")
