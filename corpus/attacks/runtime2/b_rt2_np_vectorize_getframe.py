# warden-case: b-rt2-np-vectorize-getframe
# group: B
# technique: np.vectorize wraps sys._getframe; numpy's frames call it for the program
# variant: value-passing
# expect-static: deny
# expect-rules: IMP101 ATTR302 DYN403
# expect-jail: contained
# expect-runtime: ATTR303
import sys

import numpy as np

frames = np.vectorize(sys._getframe, otypes=[object])(np.array([0]))
print(frames[0].f_globals.get("__name__"))
