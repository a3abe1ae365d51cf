# warden-case: d-rt2-pkgutil-resolve-name
# group: D
# technique: pkgutil.resolve_name (loaded by the data stack) imports a denied module by name
# variant: computed-string
# expect-static: deny
# expect-rules: IMP101 DYN402
# expect-jail: contained
# expect-runtime: IMP101
import sys

import pandas  # noqa: F401  (loads pkgutil)

resolve = sys.modules["pkgutil"].resolve_name
print(resolve("ftp" + "lib:FTP"))
