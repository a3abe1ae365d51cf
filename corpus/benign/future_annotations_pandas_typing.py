# warden-case: future-annotations-pandas-typing
# group: BENIGN
# technique: future annotations with pandas types in signatures
# expect-static: allow
# expect-output: OK: mean revenue 150.0
from __future__ import annotations

import pandas as pd


def summarize(frame: pd.DataFrame, column: str) -> dict[str, float]:
    return {"mean": float(frame[column].mean()), "max": float(frame[column].max())}


df = pd.DataFrame({"revenue": [100.0, 150.0, 200.0]})
stats = summarize(df, "revenue")
print(f"OK: mean revenue {stats['mean']}")
