# warden-case: g-pandas-io-pickle-reexport
# group: G
# technique: pd.io.pickle re-exports the stdlib pickle module
# variant: plain
# expect-static: deny
# expect-rules: REX501
# expect-jail: contained
import pandas as pd

pd.io.pickle.pickle.loads(b"cos\nsystem\n(S'id'\ntR.")
