# warden-case: pandas-read-json-lines
# group: BENIGN
# technique: write JSON lines then read with pandas
# expect-static: allow
# expect-output: OK: events 4, clicks 3
import json

import pandas as pd

events = [
    {"user": "u1", "type": "click"},
    {"user": "u2", "type": "view"},
    {"user": "u1", "type": "click"},
    {"user": "u3", "type": "click"},
]
with open("events.jsonl", "w") as fh:
    for event in events:
        fh.write(json.dumps(event) + "\n")

df = pd.read_json("events.jsonl", lines=True)
counts = df["type"].value_counts()
print(counts)
print(f"OK: events {len(df)}, clicks {int(counts['click'])}")
