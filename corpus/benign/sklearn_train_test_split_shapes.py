# warden-case: sklearn-train-test-split-shapes
# group: BENIGN
# technique: train/test split shapes with a scaler
# expect-static: allow
# expect-output: OK: train (75, 3) test (25, 3)
import numpy as np
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import MinMaxScaler

X = np.arange(300, dtype=float).reshape(100, 3)
y = (X[:, 0] > 150).astype(int)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=42)
scaler = MinMaxScaler().fit(X_train)
scaled = scaler.transform(X_train)
print("scaled range:", float(scaled.min()), float(scaled.max()))
print(f"OK: train {X_train.shape} test {X_test.shape}")
