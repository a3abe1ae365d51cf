# warden-case: g-nltk-data-load-pickle
# group: G
# technique: nltk.data.load of a pickle the program wrote
# variant: plain
# references: CVE-2024-39705
# expect-static: deny
# expect-rules: REF201
# expect-jail: contained
import nltk

with open("model.pickle", "wb") as fh:
    fh.write(b"cos\nsystem\n(S'id'\ntR.")
print(nltk.data.load("file:model.pickle", format="pickle"))
