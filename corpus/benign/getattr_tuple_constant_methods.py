# warden-case: getattr-tuple-constant-methods
# group: BENIGN
# technique: a module-level tuple of method names drives getattr dispatch
# expect-static: allow
# expect-output: OK: std 1.0, var 1.0
import pandas as pd

SPREAD = ("std", "var")
s = pd.Series([1.0, 2.0, 3.0])
values = {}
for method in SPREAD:
    values[method] = round(getattr(s, method)(), 3)
print(f"OK: std {values['std']}, var {values['var']}")
