# warden-case: d-rt3-twin-ssl-backend
# group: D
# technique: matplotlib imports _ssl (ssl's private twin) for the program
# variant: twin
# expect-static: deny
# expect-rules: IMP101 REX501
# expect-jail: contained
# expect-runtime: IMP101
import os

import matplotlib.pyplot as plt

plt.switch_backend("module://_s" + "sl")
print("_ssl" in os.sys.modules)
