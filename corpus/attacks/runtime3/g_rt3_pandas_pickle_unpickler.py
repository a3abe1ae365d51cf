# warden-case: g-rt3-pandas-pickle-unpickler
# group: G
# technique: pandas' pickle compatibility module's Unpickler reached through attributes
# variant: loaded-module
# expect-static: deny
# expect-rules: REF201 REX501
# expect-jail: contained
# expect-runtime: DES804
import io

import pandas as pd

pickle = pd.io.pickle.pickle
pickle.Unpickler(io.BytesIO(b"cposix\nsystem\n(S'touch /work/PWNED'\ntR.")).load()
