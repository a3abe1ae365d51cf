# warden-case: e-statsmodels-formula-dunder-import
# group: E
# technique: a statsmodels formula term imports os with __import__ inside I()
# variant: plain
# expect-static: deny
# expect-rules: STR601
# expect-jail: contained; no-path /tmp/warden-escape*
import pandas as pd
import statsmodels.formula.api as smf

df = pd.DataFrame({"y": [1.0, 2.0, 3.0, 4.0], "x": [1.0, 2.0, 3.0, 5.0]})
model = smf.ols("y ~ I(x + __import__('os').system('id > /tmp/warden-escape-formula'))", data=df).fit()
print(model.params)
