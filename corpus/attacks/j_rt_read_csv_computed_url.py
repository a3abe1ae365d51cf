# warden-case: j-rt-read-csv-computed-url
# group: J
# technique: pd.read_csv of a URL built at run time opens a socket
# variant: computed-string
# expect-static: allow
# expect-rules: FILE704
# expect-jail: no-connect tcp4:127.0.0.1:5758
# expect-runtime: NET802
import pandas as pd

url = "".join(["ht", "tp://127.0.0.1:", str(5758), "/data.csv"])
print(pd.read_csv(url))
