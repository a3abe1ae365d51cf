# warden-case: i-rt2-to-parquet-outside
# group: I
# technique: DataFrame.to_parquet writes through pyarrow's C++ filesystem to a path outside the write roots
# variant: computed-string
# expect-static: deny
# expect-rules: FILE702
# expect-jail: no-path /usr/warden-escape*
# expect-runtime: FILE702
import pandas as pd

pd.DataFrame({"a": [1]}).to_parquet("/usr/" + "warden-escape-rt2.parquet")
