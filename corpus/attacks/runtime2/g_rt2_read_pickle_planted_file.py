# warden-case: g-rt2-read-pickle-planted-file
# group: G
# technique: pd.read_pickle of a file the program planted through an internal module path
# variant: other
# expect-static: deny
# expect-rules: REF201 REX501
# expect-jail: contained
# expect-runtime: DES804
import pandas.io.pickle as pio

with open("data.pkl", "wb") as fh:
    fh.write(b"cos\nsystem\n(S'id'\ntR.")
pio.read_pickle("data.pkl")
