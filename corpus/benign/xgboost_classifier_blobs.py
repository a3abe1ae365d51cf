# warden-case: xgboost-classifier-blobs
# group: BENIGN
# technique: xgboost XGBClassifier on synthetic blobs
# expect-static: allow
# expect-output: OK: xgboost accuracy above 0.9 True
from sklearn.datasets import make_blobs
from sklearn.model_selection import train_test_split
from xgboost import XGBClassifier

X, y = make_blobs(n_samples=300, centers=2, random_state=0, cluster_std=1.0)
X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)
model = XGBClassifier(n_estimators=30, max_depth=3, n_jobs=1, random_state=0)
model.fit(X_train, y_train)
accuracy = (model.predict(X_test) == y_test).mean()
print(f"OK: xgboost accuracy above 0.9 {bool(accuracy > 0.9)}")
