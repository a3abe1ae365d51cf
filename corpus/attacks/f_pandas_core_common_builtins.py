# warden-case: f-pandas-core-common-builtins
# group: F
# technique: pd.core.common.builtins re-exports the builtins module
# variant: plain
# references: CVE-2026-27952
# expect-static: deny
# expect-rules: REX501
# expect-jail: contained
import pandas as pd

pd.core.common.builtins.exec("import os; os.system('id')")
