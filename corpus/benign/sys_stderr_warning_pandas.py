# warden-case: sys-stderr-warning-pandas
# group: BENIGN
# technique: warnings about dropped rows go to sys.stderr while results go to stdout
# expect-static: allow
# expect-output: OK: kept 3 of 4 rows
import sys

import pandas as pd

df = pd.DataFrame({"v": [1.0, None, 3.0, 4.0]})
clean = df.dropna()
dropped = len(df) - len(clean)
if dropped:
    sys.stderr.write(f"warning: dropped {dropped} row(s) with missing values\n")
print(f"OK: kept {len(clean)} of {len(df)} rows")
