# warden-case: vars-namespace-json
# group: BENIGN
# technique: vars() of a SimpleNamespace serialised as JSON
# expect-static: allow
# expect-output: OK: {"epochs": 3, "lr": 0.01}
import json
import types

params = types.SimpleNamespace(lr=0.01, epochs=3)
print(f"OK: {json.dumps(vars(params), sort_keys=True)}")
