# warden-case: e-rt2-df-query-local-call
# group: E
# technique: df.query with the python engine calls a local function (@os.system) inside the expression
# variant: computed-string
# expect-static: deny
# expect-rules: IMP101 STR601
# expect-jail: contained
# expect-runtime: PROC801
import os
import pandas as pd

frame = pd.DataFrame({"a": [0]})
run = os.system
print(frame.query("a == @run('id')", engine="python"))
