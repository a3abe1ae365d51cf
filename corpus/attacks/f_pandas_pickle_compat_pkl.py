# warden-case: f-pandas-pickle-compat-pkl
# group: F
# technique: pandas 1.5 keeps the pickle module as pandas.compat.pickle_compat.pkl (found by warden runtime check)
# variant: other
# expect-static: deny
# expect-rules: REF201
# expect-jail: contained
import pandas as pd

pd.compat.pickle_compat.pkl.loads(b"cos\nsystem\n(S'id'\ntR.")
