# warden-case: e-rt-query-local-module-method
# group: E
# technique: DataFrame.query with an @-reference to a local holding os, calling system inside the expression
# variant: other
# expect-static: deny
# expect-rules: REX501 STR601
# expect-runtime: PROC801
# expect-jail: contained
import os.path
import pandas as pd
tool = os.path.os
frame = pd.DataFrame({"a": [1]})
frame.query("@tool.system('id') == 0")
