# warden-case: e-df-eval-at-builtins
# group: E
# technique: DataFrame.eval with @__builtins__ reaching exec
# variant: other
# expect-static: deny
# expect-rules: STR601
# expect-jail: contained
import pandas as pd

df = pd.DataFrame({"a": [1, 2, 3]})
df.eval("@__builtins__.exec('import os; os.system(\"id\")')", engine="python")
