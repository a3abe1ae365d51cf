# warden-case: json-config-roundtrip
# group: BENIGN
# technique: json dump and load in the work dir
# expect-static: allow
# expect-output: OK: config roundtrip True, 3 keys
import json

config = {"name": "report", "thresholds": [0.1, 0.5, 0.9], "options": {"verbose": False, "retries": 3}}
with open("config.json", "w") as fh:
    json.dump(config, fh, indent=2, sort_keys=True)
with open("config.json") as fh:
    loaded = json.load(fh)

print(json.dumps(loaded["options"], sort_keys=True))
print(f"OK: config roundtrip {loaded == config}, {len(loaded)} keys")
