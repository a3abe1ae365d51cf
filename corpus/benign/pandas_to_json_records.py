# warden-case: pandas-to-json-records
# group: BENIGN
# technique: write records JSON in the work dir and read it back
# expect-static: allow
# expect-output: OK: json records 3
import json

import pandas as pd

df = pd.DataFrame({"sku": ["a1", "b2", "c3"], "stock": [4, 0, 9]})
df.to_json("out.json", orient="records")
with open("out.json") as fh:
    records = json.load(fh)
print(records)
print("out of stock:", [r["sku"] for r in records if r["stock"] == 0])
print(f"OK: json records {len(records)}")
