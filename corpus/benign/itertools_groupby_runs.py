# warden-case: itertools-groupby-runs
# group: BENIGN
# technique: run-length encoding with itertools.groupby
# expect-static: allow
# expect-output: OK: encoded a3b2c1a2
from itertools import groupby

s = "aaabbcaa"
runs = [(ch, len(list(g))) for ch, g in groupby(s)]
encoded = "".join(f"{ch}{n}" for ch, n in runs)
print(runs)
print(f"OK: encoded {encoded}")
