# warden-case: i-rt2-to-csv-buf-outside
# group: I
# technique: DataFrame.to_string(buf=...) writes a file outside the write roots
# variant: other
# expect-static: allow
# expect-rules: none
# expect-jail: no-path /etc/warden-escape*
# expect-runtime: FILE702
import pandas as pd

pd.DataFrame({"a": [1]}).to_string(buf="/etc/warden-escape-rt2")
