# warden-case: pandas-nlargest-products
# group: BENIGN
# technique: nlargest for a top-k table
# expect-static: allow
# expect-output: OK: top3 ['d', 'b', 'e']
import pandas as pd

df = pd.DataFrame({"product": list("abcdef"), "sold": [30, 80, 10, 95, 60, 20]})
top = df.nlargest(3, "sold")
print(top.to_string(index=False))
print(f"OK: top3 {top['product'].tolist()}")
