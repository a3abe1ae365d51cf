# warden-case: g-rt2-getattr-read-pickle
# group: G
# technique: pd.read_pickle looked up by a built name on the pandas module
# variant: computed-string
# expect-static: deny
# expect-rules: IMP101 ATTR304
# expect-jail: contained
# expect-runtime: DES804
import pandas as pd

with open("frame.pkl", "wb") as fh:
    fh.write(b"cos\nsystem\n(S'id'\ntR.")
getattr(pd, "read_" + "pickle")("frame.pkl")
