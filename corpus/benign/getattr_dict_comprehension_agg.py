# warden-case: getattr-dict-comprehension-agg
# group: BENIGN
# technique: a dict comprehension that dispatches on method names
# expect-static: allow
# expect-output: OK: min=1 sum=10
import pandas as pd

s = pd.Series([4, 1, 3, 2])
stats = {name: getattr(s, name)() for name in ("min", "sum")}
print(f"OK: min={stats['min']} sum={stats['sum']}")
