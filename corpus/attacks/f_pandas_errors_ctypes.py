# warden-case: f-pandas-errors-ctypes
# group: F
# technique: pd.errors.ctypes re-exports ctypes
# variant: plain
# references: CVE-2026-27952
# expect-static: deny
# expect-rules: REX501
# expect-jail: contained
import pandas as pd

libc = pd.errors.ctypes.CDLL(None)
libc.system(b"id")
