# warden-case: d-rt3-twin-pyarrow-fs-backend
# group: D
# technique: matplotlib imports pyarrow._fs (pyarrow.fs's private twin) for the program
# variant: twin
# expect-static: deny
# expect-rules: TODO
# expect-jail: contained
# expect-runtime: IMP101
import os

import matplotlib.pyplot as plt

plt.switch_backend("module://pyarrow." + "_fs")
print("pyarrow._fs" in os.sys.modules)
