# warden-case: sklearn-pipeline-scaler
# group: BENIGN
# technique: Pipeline of StandardScaler and Ridge
# expect-static: allow
# expect-output: OK: pipeline steps ['scale', 'ridge']
import numpy as np
from sklearn.linear_model import Ridge
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler

rng = np.random.default_rng(5)
X = rng.normal(size=(60, 3)) * [1, 100, 0.01]
y = X @ np.array([1.0, 0.02, 50.0]) + rng.normal(0, 0.1, 60)

pipe = Pipeline([("scale", StandardScaler()), ("ridge", Ridge(alpha=1.0))])
pipe.fit(X, y)
print("fit quality ok:", pipe.score(X, y) > 0.9)
print(f"OK: pipeline steps {[name for name, _ in pipe.steps]}")
