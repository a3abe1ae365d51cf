# warden-case: g-rt2-pandas-io-pickle-loads
# group: G
# technique: pickle reached as pandas.io.pickle.pickle loads a reference to os.system
# variant: import-alias
# expect-static: deny
# expect-rules: REF201 REX501
# expect-jail: contained
# expect-runtime: DES804
import pandas.io.pickle as pio

pio.pickle.loads(b"cos\nsystem\n(S'id'\ntR.")
