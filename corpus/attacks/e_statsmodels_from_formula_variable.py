# warden-case: e-statsmodels-from-formula-variable
# group: E
# technique: Model.from_formula with a formula held in a variable bound to a literal that calls eval
# variant: assignment-alias
# expect-static: deny
# expect-rules: STR601
# expect-jail: contained
import pandas as pd
import statsmodels.api as sm

df = pd.DataFrame({"y": [1.0, 2.0, 3.0, 4.0], "x": [1.0, 2.0, 3.0, 5.0]})
spec = "y ~ x + eval(\"__import__('os').system('id')\")"
model = sm.OLS.from_formula(spec, df).fit()
print(model.params)
