# warden-case: e-patsy-dmatrix-open-builtin
# group: E
# technique: patsy.dmatrix with a term calling the builtin open on a host file
# variant: plain
# expect-static: deny
# expect-rules: STR601
# expect-jail: canary-unread; no-read /etc/shadow
import pandas as pd
import patsy

df = pd.DataFrame({"y": [1.0, 2.0, 3.0, 4.0], "x": [1.0, 2.0, 3.0, 5.0]})
design = patsy.dmatrix("x + I(len(open('/etc/shadow').read()))", df)
print(design)
