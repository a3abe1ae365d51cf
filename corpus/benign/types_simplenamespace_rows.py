# warden-case: types-simplenamespace-rows
# group: BENIGN
# technique: records as SimpleNamespace objects sorted by attribute
# expect-static: allow
# expect-output: OK: top seller carol
from types import SimpleNamespace

sales = [SimpleNamespace(name="alice", total=120), SimpleNamespace(name="carol", total=310),
         SimpleNamespace(name="bob", total=95)]
top = max(sales, key=lambda s: s.total)
print(f"OK: top seller {top.name}")
