# warden-case: g-df-to-pickle-roundtrip
# group: G
# technique: DataFrame.to_pickle then read back (banned method on any receiver)
# variant: other
# expect-static: deny
# expect-rules: REF202 REF201
# expect-jail: contained
import pandas as pd

df = pd.DataFrame({"a": [1, 2]})
df.to_pickle("cache.pkl")
print(pd.read_pickle("cache.pkl"))
