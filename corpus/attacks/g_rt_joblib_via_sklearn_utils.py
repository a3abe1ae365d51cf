# warden-case: g-rt-joblib-via-sklearn-utils
# group: G
# technique: joblib.load reached through sklearn's private re-export, on a pickle the program wrote
# variant: import-alias
# expect-static: deny
# expect-rules: ATTR302
# expect-runtime: DES804
# expect-jail: contained
import sklearn.utils
with open("model.pkl", "wb") as handle:
    handle.write(b"cposix\nsystem\n(S'id'\ntR.")
sklearn.utils._joblib.load("model.pkl")
