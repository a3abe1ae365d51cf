# warden-case: types-simplenamespace-config
# group: BENIGN
# technique: types.SimpleNamespace as a light configuration object
# expect-static: allow
# expect-output: OK: lr=0.1 epochs=5
import types

config = types.SimpleNamespace(lr=0.1, epochs=5, seed=42)
config.epochs = 5
print(f"OK: lr={config.lr} epochs={config.epochs}")
