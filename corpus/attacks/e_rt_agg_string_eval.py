# warden-case: e-rt-agg-string-eval
# group: E
# technique: DataFrame.agg('eval') dispatches by name to DataFrame.eval, whose expression calls a method of a local holding os
# variant: computed-string
# expect-static: deny
# expect-rules: REX501
# expect-runtime: PROC801
# expect-jail: contained
import os.path
import pandas as pd
frame = pd.DataFrame({"a": [1]})
frame.agg("eval", expr="@tool.system('id')", local_dict={"tool": os.path.os})
