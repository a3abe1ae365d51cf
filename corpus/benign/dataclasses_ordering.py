# warden-case: dataclasses-ordering
# group: BENIGN
# technique: ordered frozen dataclasses used in sorting and sets
# expect-static: allow
# expect-output: OK: sorted versions ['1.2.0', '1.10.0', '2.0.1']
from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class Version:
    major: int
    minor: int
    patch: int

    @classmethod
    def parse(cls, text):
        return cls(*(int(p) for p in text.split(".")))

    def label(self):
        return f"{self.major}.{self.minor}.{self.patch}"


versions = [Version.parse(v) for v in ["2.0.1", "1.10.0", "1.2.0", "1.2.0"]]
unique = sorted(set(versions))
print("newest:", max(unique).label())
print(f"OK: sorted versions {[v.label() for v in unique]}")
