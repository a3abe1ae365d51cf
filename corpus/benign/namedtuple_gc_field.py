# warden-case: namedtuple-gc-field
# group: BENIGN
# technique: a namedtuple with a field named gc (GC content of DNA)
# expect-static: allow
# expect-output: OK: highest gc 0.62 in s2
from collections import namedtuple

Sample = namedtuple("Sample", ["name", "gc"])
samples = [Sample("s1", 0.41), Sample("s2", 0.62), Sample("s3", 0.55)]
best = max(samples, key=lambda s: s.gc)
print(f"OK: highest gc {best.gc} in {best.name}")
