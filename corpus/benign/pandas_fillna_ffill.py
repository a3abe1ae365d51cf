# warden-case: pandas-fillna-ffill
# group: BENIGN
# technique: forward fill and fillna with a value
# expect-static: allow
# expect-output: OK: remaining missing 0
import numpy as np
import pandas as pd

df = pd.DataFrame({
    "temp": [20.0, np.nan, 22.0, np.nan, np.nan, 25.0],
    "station": ["x", None, "x", "y", None, "y"],
})
df["temp"] = df["temp"].ffill()
df["station"] = df["station"].fillna("unknown")
print(df)
print(f"OK: remaining missing {int(df.isna().sum().sum())}")
