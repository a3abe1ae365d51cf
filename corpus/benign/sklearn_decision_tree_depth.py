# warden-case: sklearn-decision-tree-depth
# group: BENIGN
# technique: shallow decision tree
# expect-static: allow
# expect-output: OK: tree depth 2
from sklearn.datasets import load_iris
from sklearn.tree import DecisionTreeClassifier, export_text

X, y = load_iris(return_X_y=True)
tree = DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, y)
print(export_text(tree, feature_names=["sl", "sw", "pl", "pw"]))
print(f"OK: tree depth {tree.get_depth()}")
