# warden-case: i-rt-to-csv-computed-outside
# group: I
# technique: DataFrame.to_csv to a computed path outside the write roots
# variant: computed-string
# expect-static: allow
# expect-rules: FILE704
# expect-jail: no-path /usr/lib/warden-escape*
# expect-runtime: FILE702
import pandas as pd

name = "/".join(["", "usr", "lib", "warden-escape.csv"])
pd.DataFrame({"a": [1]}).to_csv(name)
