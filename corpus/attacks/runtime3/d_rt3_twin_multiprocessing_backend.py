# warden-case: d-rt3-twin-multiprocessing-backend
# group: D
# technique: matplotlib imports _multiprocessing (multiprocessing's private twin) for the program
# variant: twin
# expect-static: deny
# expect-rules: IMP101 REX501
# expect-jail: contained
# expect-runtime: IMP101
import os

import matplotlib.pyplot as plt

plt.switch_backend("module://_multi" + "processing")
print("_multiprocessing" in os.sys.modules)
