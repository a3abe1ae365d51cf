# warden-case: numbers-type-checks
# group: BENIGN
# technique: numbers ABCs for input validation
# expect-static: allow
# expect-output: OK: numeric inputs 4 of 6
import numbers
from decimal import Decimal
from fractions import Fraction

inputs = [1, 2.5, Fraction(1, 3), Decimal("1.1"), "3", None]
numeric = [x for x in inputs if isinstance(x, numbers.Number)]
reals = [x for x in inputs if isinstance(x, numbers.Real)]
print("reals:", len(reals))
print(f"OK: numeric inputs {len(numeric)} of {len(inputs)}")
