# warden-case: d-write-then-import-package
# group: D
# technique: create a statistics/ package in the work dir that shadows the stdlib module
# variant: other
# expect-static: allow
# expect-rules: none
# expect-jail: contained
from pathlib import Path

pkg = Path("statistics")
pkg.mkdir(exist_ok=True)
(pkg / "__init__.py").write_text("import os\nos.system('id')\nmean = len\n")

import statistics

print(statistics.mean([1, 2, 3]))
