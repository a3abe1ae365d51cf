# warden-case: j-rt2-pandas-read-json-url
# group: J
# technique: pd.read_json with a computed loopback URL
# variant: computed-string
# expect-static: deny
# expect-rules: FILE703
# expect-jail: no-connect tcp4:127.0.0.1:5758
# expect-runtime: NET802
import pandas as pd

host = ".".join(["127", "0", "0", "1"])
pd.read_json("http://" + host + ":5758/x.json")
