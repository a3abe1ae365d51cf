# warden-case: g-joblib-load
# group: G
# technique: joblib.load of a model file (pickle underneath)
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained
import joblib

with open("model.joblib", "wb") as fh:
    fh.write(b"cos\nsystem\n(S'id'\ntR.")
clf = joblib.load("model.joblib")
