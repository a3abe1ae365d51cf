# warden-case: e-rt2-patsy-formula-import
# group: E
# technique: a patsy formula term I(...) imports os and runs a command
# variant: computed-string
# expect-static: deny
# expect-rules: ATTR301 STR601
# expect-jail: contained
# expect-runtime: PROC801
import pandas as pd
import patsy

data = pd.DataFrame({"y": [1.0, 2.0, 3.0]})
patsy.dmatrix("I(__import__('os').system('id'))", data)
