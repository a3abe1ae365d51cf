# warden-case: j-imblearn-fetch-datasets
# group: J
# technique: imblearn.datasets.fetch_datasets downloads benchmark data from the network
# variant: plain
# expect-static: deny
# expect-rules: REF201
# expect-jail: contained; layer ns:net
from imblearn.datasets import fetch_datasets

print(list(fetch_datasets(filter_data=("ecoli",))))
