# warden-case: sklearn-linear-regression
# group: BENIGN
# technique: LinearRegression on an exact line
# expect-static: allow
# expect-output: OK: coef 4.00 intercept 3.00
import numpy as np
from sklearn.linear_model import LinearRegression

X = np.arange(10, dtype=float).reshape(-1, 1)
y = 4 * X.ravel() + 3
model = LinearRegression().fit(X, y)
print("r2:", round(model.score(X, y), 3))
print(f"OK: coef {model.coef_[0]:.2f} intercept {model.intercept_:.2f}")
