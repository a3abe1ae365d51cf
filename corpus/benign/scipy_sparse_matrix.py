# warden-case: scipy-sparse-matrix
# group: BENIGN
# technique: sparse CSR matrix operations
# expect-static: allow
# expect-output: OK: nnz 4, row sums [3, 0, 7]
import numpy as np
from scipy.sparse import csr_matrix

dense = np.array([[1, 0, 2], [0, 0, 0], [3, 4, 0]])
sparse = csr_matrix(dense)
row_sums = np.asarray(sparse.sum(axis=1)).ravel()
print("dense again equal:", bool((sparse.toarray() == dense).all()))
print(f"OK: nnz {sparse.nnz}, row sums {row_sums.tolist()}")
