# warden-case: statsmodels-logit-arrays
# group: BENIGN
# technique: statsmodels Logit on arrays with add_constant
# expect-static: allow
# expect-output: OK: logit coefficients positive True, n 500
import numpy as np
import statsmodels.api as sm

rng = np.random.default_rng(1)
x = rng.normal(size=500)
p = 1 / (1 + np.exp(-(0.5 + 2.0 * x)))
y = (rng.uniform(size=500) < p).astype(int)
result = sm.Logit(y, sm.add_constant(x)).fit(disp=0)
coef = result.params
print(f"OK: logit coefficients positive {bool(coef[1] > 1)}, n {int(result.nobs)}")
