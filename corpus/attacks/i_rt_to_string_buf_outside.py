# warden-case: i-rt-to-string-buf-outside
# group: I
# technique: DataFrame.to_string writes to a path outside the roots given as buf=
# variant: other
# expect-static: allow
# expect-rules: none
# expect-runtime: FILE702
# expect-jail: no-path /etc/warden-escape*
import pandas as pd
frame = pd.DataFrame({"a": [1]})
target = "/etc/" + "warden-escape-buf"
frame.to_string(buf=target)
