# warden-case: json-nested-aggregation
# group: BENIGN
# technique: aggregate nested JSON from a string
# expect-static: allow
# expect-output: OK: 3 orders, revenue 57.5, best seller tea
import json
from collections import Counter

payload = """
{"orders": [
  {"id": 1, "items": [{"sku": "tea", "qty": 2, "price": 5.0}, {"sku": "mug", "qty": 1, "price": 12.5}]},
  {"id": 2, "items": [{"sku": "tea", "qty": 3, "price": 5.0}]},
  {"id": 3, "items": [{"sku": "pot", "qty": 1, "price": 20.0}]}
]}
"""
data = json.loads(payload)
revenue = 0.0
sold = Counter()
for order in data["orders"]:
    for item in order["items"]:
        revenue += item["qty"] * item["price"]
        sold[item["sku"]] += item["qty"]
print(f"OK: {len(data['orders'])} orders, revenue {revenue}, best seller {sold.most_common(1)[0][0]}")
