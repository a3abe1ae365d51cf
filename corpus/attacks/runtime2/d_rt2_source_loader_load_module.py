# warden-case: d-rt2-source-loader-load-module
# group: D
# technique: a SourceFileLoader built by the program loads a denied stdlib module
# variant: other
# expect-static: deny
# expect-rules: IMP101 DYN402
# expect-jail: contained
# expect-runtime: IMP101
import sys

import pandas  # noqa: F401  (loads importlib.util)

external = sys.modules["_frozen_importlib_external"]
spec = sys.modules["importlib.util"].find_spec("telnetlib")
loader = external.SourceFileLoader("telnetlib", spec.origin)
print(loader.load_module())
