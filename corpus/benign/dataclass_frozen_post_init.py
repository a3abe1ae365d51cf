# warden-case: dataclass-frozen-post-init
# group: BENIGN
# technique: object.__setattr__ sets a derived field in a frozen dataclass
# expect-static: allow
# expect-output: OK: area 6.0 (frozen)
from dataclasses import FrozenInstanceError, dataclass, field


@dataclass(frozen=True)
class Rect:
    w: float
    h: float
    area: float = field(init=False)

    def __post_init__(self):
        object.__setattr__(self, "area", self.w * self.h)


r = Rect(2.0, 3.0)
try:
    r.w = 5.0
except FrozenInstanceError:
    print(f"OK: area {r.area} (frozen)")
