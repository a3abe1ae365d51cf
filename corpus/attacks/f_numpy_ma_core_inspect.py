# warden-case: f-numpy-ma-core-inspect
# group: F
# technique: numpy.ma.core.inspect re-exports inspect, giving frames
# variant: plain
# references: CVE-2026-27952
# expect-static: deny
# expect-rules: REX501 ATTR303
# expect-jail: contained
import numpy as np

glb = np.ma.core.inspect.currentframe().f_globals
glb["__builtins__"].exec("import os; os.system('id')")
