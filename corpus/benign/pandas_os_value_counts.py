# warden-case: pandas-os-value-counts
# group: BENIGN
# technique: value_counts on an attribute-accessed column named os
# expect-static: allow
# expect-output: OK: most common os is android
import pandas as pd

df = pd.DataFrame({"os": ["android", "ios", "android", "android", "ios"]})
top = df.os.value_counts().idxmax()
print(f"OK: most common os is {top}")
