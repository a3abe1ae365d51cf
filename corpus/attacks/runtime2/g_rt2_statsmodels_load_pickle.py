# warden-case: g-rt2-statsmodels-load-pickle
# group: G
# technique: statsmodels' load_pickle reached through statsmodels.api
# variant: other
# expect-static: deny
# expect-rules: REF201 REF202
# expect-jail: contained
# expect-runtime: DES804
import statsmodels.api as sm

with open("model.pkl", "wb") as fh:
    fh.write(b"cos\nsystem\n(S'id'\ntR.")
sm.load_pickle("model.pkl")
