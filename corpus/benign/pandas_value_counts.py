# warden-case: pandas-value-counts
# group: BENIGN
# technique: value_counts on a categorical column
# expect-static: allow
# expect-output: OK: most common colour red (3)
import pandas as pd

colours = pd.Series(["red", "blue", "red", "green", "blue", "red"])
counts = colours.value_counts()
print(counts)
print(f"OK: most common colour {counts.index[0]} ({int(counts.iloc[0])})")
