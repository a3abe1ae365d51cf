# warden-case: j-rt-sklearn-fetch-covtype
# group: J
# technique: sklearn.datasets.fetch_covtype downloads through urlopen
# variant: plain
# expect-static: allow
# expect-rules: none
# expect-jail: contained; layer ns:net
# expect-runtime: NET802
from sklearn.datasets import fetch_covtype

data = fetch_covtype(data_home="cache", download_if_missing=True)
print(data.data.shape)
