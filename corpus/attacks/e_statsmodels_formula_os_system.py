# warden-case: e-statsmodels-formula-os-system
# group: E
# technique: a statsmodels formula term calls os.system: patsy evaluates terms in the caller's namespace
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained
import os.path
import pandas as pd
import statsmodels.formula.api as smf

df = pd.DataFrame({"y": [1.0, 2.0, 3.0, 4.0], "x": [1.0, 2.0, 3.0, 5.0]})
model = smf.ols("y ~ x + os.system('id > warden-escape-formula')", data=df).fit()
print(model.params)
