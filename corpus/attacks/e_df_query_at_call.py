# warden-case: e-df-query-at-call
# group: E
# technique: DataFrame.query with an @ reference that walks to os and calls it
# variant: other
# expect-static: deny
# expect-rules: STR601
# expect-jail: contained
import pandas as pd

df = pd.DataFrame({"a": [1, 2, 3]})
print(df.query("a > @pd.io.common.os.system('id')", engine="python"))
