# warden-case: g-statsmodels-load-pickle
# group: G
# technique: statsmodels.api.load_pickle unpickles a file the program wrote
# variant: plain
# expect-static: deny
# expect-rules: REF201
# expect-jail: contained
import statsmodels.api as sm

with open("model.pickle", "wb") as fh:
    fh.write(b"cos\nsystem\n(S'id'\ntR.")
print(sm.load_pickle("model.pickle"))
