# warden-case: g-rt-pandas-read-pickle-io-path
# group: G
# technique: pandas' pickle reader reached through pandas.io.api under a local name
# variant: assignment-alias
# expect-static: deny
# expect-rules: ATTR304
# expect-runtime: DES804
# expect-jail: contained
import pandas.io.api as api
with open("frame.pkl", "wb") as handle:
    handle.write(b"cposix\nsystem\n(S'id'\ntR.")
reader = getattr(api, "read_" + "pickle")
reader("frame.pkl")
