# warden-case: g-rt3-numpy-format-pickle-loads
# group: G
# technique: numpy's own pickle module reached through an attribute, loads with a global
# variant: loaded-module
# expect-static: deny
# expect-rules: REX501
# expect-jail: contained
# expect-runtime: DES804
import numpy as np

np.lib.format.pickle.loads(b"cposix\nsystem\n(S'touch /work/PWNED'\ntR.")
