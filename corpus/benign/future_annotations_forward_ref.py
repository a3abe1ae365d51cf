# warden-case: future-annotations-forward-ref
# group: BENIGN
# technique: postponed annotations let a method return its own class
# expect-static: allow
# expect-output: OK: 2.50 + 1.25 = 3.75
from __future__ import annotations


class Money:
    def __init__(self, amount: float) -> None:
        self.amount = amount

    def add(self, other: Money) -> Money:
        return Money(self.amount + other.amount)

    def __repr__(self) -> str:
        return f"{self.amount:.2f}"


a, b = Money(2.5), Money(1.25)
print(f"OK: {a} + {b} = {a.add(b)}")
