# warden-case: imblearn-smote-balance
# group: BENIGN
# technique: imbalanced-learn SMOTE balances a skewed data set
# expect-static: allow
# expect-output: OK: balanced True, rows 538
from collections import Counter

from imblearn.over_sampling import SMOTE
from sklearn.datasets import make_classification

X, y = make_classification(n_samples=300, weights=[0.9, 0.1], n_features=5, random_state=0)
X_res, y_res = SMOTE(random_state=0).fit_resample(X, y)
counts = Counter(y_res.tolist())
print(f"OK: balanced {counts[0] == counts[1]}, rows {len(y_res)}")
