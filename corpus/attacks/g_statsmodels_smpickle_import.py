# warden-case: g-statsmodels-smpickle-import
# group: G
# technique: load_pickle imported from statsmodels.iolib.smpickle
# variant: import-alias
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained
from statsmodels.iolib.smpickle import load_pickle as lp

with open("model.pickle", "wb") as fh:
    fh.write(b"cos\nsystem\n(S'id'\ntR.")
print(lp("model.pickle"))
