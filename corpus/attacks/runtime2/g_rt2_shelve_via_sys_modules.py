# warden-case: g-rt2-shelve-via-sys-modules
# group: G
# technique: pickle's Unpickler class reached through copy's module graph
# variant: value-passing
# expect-static: deny
# expect-rules: REF201 REX501
# expect-jail: contained
# expect-runtime: DES804
import io
import pandas as pd

pickle = pd.io.pickle.pickle
pickle.Unpickler(io.BytesIO(b"cos\nsystem\n(S'id'\ntR.")).load()
