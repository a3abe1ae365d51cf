# warden-case: lightgbm-regressor-early-stopping
# group: BENIGN
# technique: lightgbm LGBMRegressor with an eval set and early stopping
# expect-static: allow
# expect-output: OK: lightgbm rmse below 1 True
import lightgbm as lgb
import numpy as np

rng = np.random.default_rng(3)
X = rng.normal(size=(400, 4))
y = X[:, 0] * 3 + X[:, 1] ** 2 + rng.normal(0, 0.1, 400)
model = lgb.LGBMRegressor(n_estimators=200, learning_rate=0.1, n_jobs=1, verbose=-1, random_state=0)
model.fit(X[:300], y[:300], eval_set=[(X[300:], y[300:])], callbacks=[lgb.early_stopping(10, verbose=False)])
error = np.sqrt(np.mean((model.predict(X[300:]) - y[300:]) ** 2))
print(f"OK: lightgbm rmse below 1 {bool(error < 1.0)}")
