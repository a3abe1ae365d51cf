# warden-case: sklearn-random-forest
# group: BENIGN
# technique: random forest on a synthetic dataset
# expect-static: allow
# expect-output: OK: forest of 50 trees, accurate True
from sklearn.datasets import make_classification
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import train_test_split

X, y = make_classification(n_samples=300, n_features=8, n_informative=4, random_state=0)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=0)
forest = RandomForestClassifier(n_estimators=50, random_state=0).fit(X_train, y_train)
acc = forest.score(X_test, y_test)
ranked = sorted(range(X.shape[1]), key=lambda i: forest.feature_importances_[i], reverse=True)
print("most important features:", ranked[:3])
print(f"OK: forest of {len(forest.estimators_)} trees, accurate {acc > 0.7}")
