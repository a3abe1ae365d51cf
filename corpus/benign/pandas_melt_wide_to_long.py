# warden-case: pandas-melt-wide-to-long
# group: BENIGN
# technique: melt a wide table to long format
# expect-static: allow
# expect-output: OK: long shape (6, 3)
import pandas as pd

wide = pd.DataFrame({"city": ["Oslo", "Rome", "Lima"], "2022": [1, 2, 3], "2023": [4, 5, 6]})
long = wide.melt(id_vars="city", var_name="year", value_name="visits")
print(long.sort_values(["city", "year"]).to_string(index=False))
print("total visits:", int(long["visits"].sum()))
print(f"OK: long shape {long.shape}")
