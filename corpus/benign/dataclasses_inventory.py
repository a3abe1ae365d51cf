# warden-case: dataclasses-inventory
# group: BENIGN
# technique: dataclasses with defaults and field factories
# expect-static: allow
# expect-output: OK: inventory value 47.50, low stock ['bolt']
from dataclasses import asdict, dataclass, field


@dataclass
class Item:
    name: str
    price: float
    qty: int = 0
    tags: list = field(default_factory=list)

    def value(self) -> float:
        return self.price * self.qty


stock = [Item("nut", 0.5, 40, ["metal"]), Item("bolt", 2.5, 3), Item("washer", 0.25, 80)]
total = sum(i.value() for i in stock)
low = [i.name for i in stock if i.qty < 5]
print(asdict(stock[0]))
print(f"OK: inventory value {total:.2f}, low stock {low}")
