# warden-case: e-mixedlm-re-formula-keyword
# group: E
# technique: statsmodels mixedlm: the random-effects formula keyword carries the payload
# variant: other
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained
import os.path
import pandas as pd
import statsmodels.formula.api as smf

df = pd.DataFrame({"y": [1.0, 2, 3, 4, 5, 6], "x": [1.0, 2, 3, 4, 5, 7], "g": list("aabbcc")})
model = smf.mixedlm("y ~ x", df, groups=df["g"], re_formula="~os.system('id')")
print(model.fit().params)
