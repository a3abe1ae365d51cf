# warden-case: statsmodels-ols-formula
# group: BENIGN
# technique: statsmodels OLS from a formula with a log transform and a categorical term
# expect-static: allow
# expect-output: OK: log slope 3.0, r2 1.00, terms 4
import numpy as np
import pandas as pd
import statsmodels.formula.api as smf

rng = np.random.default_rng(0)
df = pd.DataFrame({"x": rng.uniform(1, 10, 200), "g": rng.choice(["a", "b", "c"], 200)})
df["y"] = 2.0 + 3.0 * np.log(df["x"]) + df["g"].map({"a": 0.0, "b": 1.0, "c": -1.0}) + rng.normal(0, 0.1, 200)
model = smf.ols("y ~ np.log(x) + C(g)", data=df).fit()
slope = model.params["np.log(x)"]
print(f"OK: log slope {slope:.1f}, r2 {model.rsquared:.2f}, terms {len(model.params)}")
