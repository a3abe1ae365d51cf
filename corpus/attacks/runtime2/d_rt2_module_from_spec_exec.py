# warden-case: d-rt2-module-from-spec-exec
# group: D
# technique: importlib.util.find_spec + module_from_spec + exec_module loads a denied module
# variant: other
# expect-static: deny
# expect-rules: IMP101 DYN402
# expect-jail: contained
# expect-runtime: IMP101
import sys

import pandas  # noqa: F401  (loads importlib.util)

util = sys.modules["importlib.util"]
spec = util.find_spec("ftplib")
module = util.module_from_spec(spec)
spec.loader.exec_module(module)
print(module.FTP)
