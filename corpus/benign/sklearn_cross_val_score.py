# warden-case: sklearn-cross-val-score
# group: BENIGN
# technique: 5-fold cross validation
# expect-static: allow
# expect-output: OK: 5 folds, mean accuracy high True
from sklearn.datasets import load_iris
from sklearn.model_selection import cross_val_score
from sklearn.neighbors import KNeighborsClassifier

X, y = load_iris(return_X_y=True)
scores = cross_val_score(KNeighborsClassifier(n_neighbors=5), X, y, cv=5)
print("scores:", [round(float(s), 3) for s in scores])
print(f"OK: {len(scores)} folds, mean accuracy high {bool(scores.mean() > 0.9)}")
