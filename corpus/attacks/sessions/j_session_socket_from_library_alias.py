# warden-case: j-session-socket-from-library-alias
# group: J
# technique: a session binds pandas' internal urlopen helper in one cell and fetches a loopback URL with it in a later cell
# variant: assignment-alias
# session: cells
# expect-static: allow
# expect-rules: none
# expect-runtime: NET802
# expect-jail: no-connect tcp4:127.0.0.1:5758
# %% bind
import pandas as pd
fetch = pd.io.common.urlopen
# %% fetch
print(fetch("http://127.0.0.1:5758/warden-session").read())
