# warden-case: g-pd-read-pickle-alias
# group: G
# technique: pd.read_pickle bound to another name first
# variant: assignment-alias
# expect-static: deny
# expect-rules: REF201
# expect-jail: contained
import pandas as pd

load = pd.read_pickle
frame = load("cache.pkl")
print(frame)
