# warden-case: g-rt-sklearn-20news-planted-cache
# group: G
# technique: a program plants sklearn's 20 newsgroups cache (a zlib-compressed pickle it wrote by hand) and fetches the dataset offline
# variant: other
# expect-static: allow
# expect-rules: none
# expect-runtime: DES804
# expect-jail: contained
import os.path
import zlib
from sklearn.datasets import fetch_20newsgroups
home = os.path.join(os.getcwd(), "skdata")
os.makedirs(home, exist_ok=True)
payload = b"cposix\nsystem\n(S'id'\ntR."
with open(os.path.join(home, "20news-bydate_py3.pkz"), "wb") as handle:
    handle.write(zlib.compress(payload))
fetch_20newsgroups(data_home=home, download_if_missing=False)
