# warden-case: b-rt2-gc-via-module-graph
# group: B
# technique: gc taken from sys.modules once pandas has loaded it, get_objects to look for the hook
# variant: value-passing
# expect-static: deny
# expect-rules: IMP101 DYN402
# expect-jail: contained
# expect-runtime: ATTR303
import sys

import pandas  # noqa: F401  (loads gc)

print(len(sys.modules["gc"].get_objects()))
