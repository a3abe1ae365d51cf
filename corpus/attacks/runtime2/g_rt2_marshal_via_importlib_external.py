# warden-case: g-rt2-marshal-via-importlib-external
# group: G
# technique: marshal reached as an attribute of importlib's frozen bootstrap module
# variant: value-passing
# expect-static: deny
# expect-rules: IMP101 DYN402
# expect-jail: contained
# expect-runtime: DES804
import sys

import pandas  # noqa: F401  (loads importlib.util)

external = sys.modules["_frozen_importlib_external"]
external.marshal.loads(b"N")
