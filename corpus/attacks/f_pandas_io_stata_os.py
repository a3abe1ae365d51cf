# warden-case: f-pandas-io-stata-os
# group: F
# technique: third-party public re-export pd.io.stata.os
# variant: plain
# references: CVE-2026-27952
# expect-static: deny
# expect-rules: REX501
# expect-jail: contained
import pandas as pd

pd.io.stata.os.system("id")
