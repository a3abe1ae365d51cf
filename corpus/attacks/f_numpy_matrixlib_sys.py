# warden-case: f-numpy-matrixlib-sys
# group: F
# technique: np.matrixlib.defmatrix.sys re-exports sys
# variant: plain
# references: CVE-2026-27952
# expect-static: deny
# expect-rules: REX501
# expect-jail: contained
import numpy as np

np.matrixlib.defmatrix.sys.modules["os"].system("id")
