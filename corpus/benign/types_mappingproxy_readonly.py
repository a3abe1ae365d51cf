# warden-case: types-mappingproxy-readonly
# group: BENIGN
# technique: types.MappingProxyType exposes a read-only view of settings
# expect-static: allow
# expect-output: OK: read-only view refused a write
import types

settings = {"currency": "EUR", "precision": 2}
view = types.MappingProxyType(settings)
try:
    view["currency"] = "USD"
except TypeError:
    print(f"OK: read-only view refused a write ({view['currency']})")
