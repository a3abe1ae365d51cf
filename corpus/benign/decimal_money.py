# warden-case: decimal-money
# group: BENIGN
# technique: Decimal arithmetic for money
# expect-static: allow
# expect-output: OK: invoice total 36.00
from decimal import ROUND_HALF_UP, Decimal, getcontext

getcontext().prec = 28
lines = [("widget", Decimal("9.99"), 2), ("gizmo", Decimal("4.25"), 3)]
subtotal = sum((price * qty for _, price, qty in lines), Decimal("0"))
tax = (subtotal * Decimal("0.10")).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
total = subtotal + tax
print("subtotal:", subtotal, "tax:", tax)
print(f"OK: invoice total {total}")
