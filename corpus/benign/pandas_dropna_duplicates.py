# warden-case: pandas-dropna-duplicates
# group: BENIGN
# technique: drop missing and duplicate rows
# expect-static: allow
# expect-output: OK: clean rows 3
import numpy as np
import pandas as pd

df = pd.DataFrame({
    "id": [1, 2, 2, 3, 4, 4],
    "value": [10.0, 20.0, 20.0, np.nan, 40.0, 40.0],
})
clean = df.dropna().drop_duplicates()
print(clean)
print(f"OK: clean rows {len(clean)}")
