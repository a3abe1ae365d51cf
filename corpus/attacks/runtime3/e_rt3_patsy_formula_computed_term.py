# warden-case: e-rt3-patsy-formula-computed-term
# group: E
# technique: a patsy formula term built at run time calls a function that imports a denied module
# variant: computed-string
# expect-static: deny
# expect-rules: ATTR301
# expect-jail: contained
# expect-runtime: DYN401
import pandas as pd
import patsy

term = "I(__import__('" + "smtp" + "lib').__name__ == 'x')"
print(patsy.dmatrix("x + " + term, pd.DataFrame({"x": [1.0, 2.0]})))
