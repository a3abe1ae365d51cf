# warden-case: pandas-itertuples-os-column
# group: BENIGN
# technique: itertuples over a frame with a column named os (row.os)
# expect-static: allow
# expect-output: OK: linux=2 mac=1
import pandas as pd

df = pd.DataFrame({"user": ["a", "b", "c"], "os": ["linux", "mac", "linux"]})
counts = {}
for row in df.itertuples():
    counts[row.os] = counts.get(row.os, 0) + 1
print(f"OK: linux={counts['linux']} mac={counts['mac']}")
