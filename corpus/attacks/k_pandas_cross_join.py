# warden-case: k-pandas-cross-join
# group: K
# technique: cross join explosion in pandas
# variant: plain
# expect-static: allow
# expect-rules: none
# expect-jail: status memory_limit|error
import pandas as pd

df = pd.DataFrame({"k": range(200_000)})
out = df.merge(df, how="cross")
print(len(out))
