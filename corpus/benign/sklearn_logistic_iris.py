# warden-case: sklearn-logistic-iris
# group: BENIGN
# technique: logistic regression on iris with a train/test split
# expect-static: allow
# expect-output: OK: test size 45, accurate True
from sklearn.datasets import load_iris
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score
from sklearn.model_selection import train_test_split

X, y = load_iris(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)
clf = LogisticRegression(max_iter=1000).fit(X_train, y_train)
acc = accuracy_score(y_test, clf.predict(X_test))
print(f"accuracy={acc:.3f}")
print(f"OK: test size {len(y_test)}, accurate {acc > 0.8}")
