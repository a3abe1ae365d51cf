# warden-case: g-pickle-load-alias
# group: G
# technique: pickle imported under an alias, loading a file the program wrote
# variant: import-alias
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained
import pickle as serializer

with open("model.pkl", "wb") as fh:
    fh.write(b"cos\nsystem\n(S'id'\ntR.")
with open("model.pkl", "rb") as fh:
    model = serializer.load(fh)
