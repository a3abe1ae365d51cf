# warden-case: fractions-exact
# group: BENIGN
# technique: exact rational arithmetic
# expect-static: allow
# expect-output: OK: harmonic(6) = 49/20
from fractions import Fraction

h = sum(Fraction(1, k) for k in range(1, 7))
ratio = Fraction(3, 4) * Fraction(2, 9)
print("ratio:", ratio, "as float:", float(ratio))
print("limit:", Fraction(3.14159).limit_denominator(100))
print(f"OK: harmonic(6) = {h}")
