# warden-case: e-pd-eval-string
# group: E
# technique: pd.eval of a string with an attribute walk
# variant: other
# expect-static: deny
# expect-rules: STR601
# expect-jail: contained
import pandas as pd

pd.eval("pd.io.common.os.system('id')", engine="python", local_dict={"pd": pd})
