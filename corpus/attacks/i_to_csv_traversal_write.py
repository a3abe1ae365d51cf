# warden-case: i-to-csv-traversal-write
# group: I
# technique: DataFrame.to_csv to /tmp/../etc/...
# variant: plain
# expect-static: deny
# expect-rules: FILE702
# expect-jail: no-path /etc/warden-escape*
import pandas as pd

df = pd.DataFrame({"user": ["warden"], "uid": [0]})
df.to_csv("/tmp/../etc/warden-escape.csv", index=False)
