# warden-case: dict-key-f-globals
# group: BENIGN
# technique: dictionary keys that happen to equal frame attribute names
# expect-static: allow
# expect-output: OK: 3 keys, f_globals=2
metrics = {"f_globals": 2, "gi_code": 5, "tb_frame": 1}
key = "f_globals"
print(f"OK: {len(metrics)} keys, {key}={metrics[key]}")
