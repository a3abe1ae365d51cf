# warden-case: sklearn-pca-variance
# group: BENIGN
# technique: PCA explained variance on iris
# expect-static: allow
# expect-output: OK: 2 components explain most variance True
from sklearn.datasets import load_iris
from sklearn.decomposition import PCA

X, _ = load_iris(return_X_y=True)
pca = PCA(n_components=2).fit(X)
ratio = pca.explained_variance_ratio_
reduced = pca.transform(X)
print("reduced shape:", reduced.shape)
print(f"OK: {pca.n_components_} components explain most variance {bool(ratio.sum() > 0.9)}")
