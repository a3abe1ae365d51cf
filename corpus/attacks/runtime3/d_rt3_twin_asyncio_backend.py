# warden-case: d-rt3-twin-asyncio-backend
# group: D
# technique: matplotlib imports _asyncio (asyncio's private twin) for the program
# variant: twin
# expect-static: deny
# expect-rules: TODO
# expect-jail: contained
# expect-runtime: IMP101
import os

import matplotlib.pyplot as plt

plt.switch_backend("module://_async" + "io")
print("_asyncio" in os.sys.modules)
