# warden-case: d-rt2-find-and-load-direct
# group: D
# technique: importlib's _find_and_load called directly imports a denied module without the import statement
# variant: other
# expect-static: deny
# expect-rules: IMP101 DYN402
# expect-jail: contained
# expect-runtime: IMP101
import sys

import pandas  # noqa: F401  (loads importlib.util)

bootstrap = sys.modules["_frozen_importlib"]
ftp = bootstrap._find_and_load("ftplib", __import__)
print(ftp.FTP)
