# warden-case: dataclass-frozen-normalize
# group: BENIGN
# technique: a frozen dataclass normalises a field in __post_init__
# expect-static: allow
# expect-output: OK: code ABC-1
from dataclasses import dataclass


@dataclass(frozen=True)
class Sku:
    code: str

    def __post_init__(self):
        object.__setattr__(self, "code", self.code.strip().upper())


print(f"OK: code {Sku('  abc-1 ').code}")
