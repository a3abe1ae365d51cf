# warden-case: e-rt2-statsmodels-formula-env
# group: E
# technique: a statsmodels formula evaluates a call to a function from the caller's namespace
# variant: computed-string
# expect-static: deny
# expect-rules: IMP101 REX501
# expect-jail: contained
# expect-runtime: PROC801
import os
import pandas as pd
import statsmodels.formula.api as smf

data = pd.DataFrame({"y": [1.0, 2.0, 3.0], "x": [1.0, 0.0, 2.0]})
popen = os.popen
smf.ols("y ~ x + I(len(popen('id').read()))", data=data).fit()
