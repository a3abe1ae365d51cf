# warden-case: g-module-value-pandas-loader
# group: G
# technique: pandas passed to a helper that calls read_pickle on its parameter, loading a pickle the program wrote byte by byte
# variant: value-passing
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained
# expect-runtime: DES804
import pandas as pd

with open("frame.pkl", "wb") as handle:
    handle.write(b"cos\nsystem\n(S'id'\ntR.")


def load(lib, path):
    return lib.read_pickle(path)


load(pd, "frame.pkl")
