# warden-case: d-rt2-reload-denied-module
# group: D
# technique: importlib.reload of a denied module pandas already loaded runs its body again for the program
# variant: other
# expect-static: deny
# expect-rules: IMP101 DYN402
# expect-jail: contained
# expect-runtime: IMP101
import sys

import pandas  # noqa: F401  (loads importlib and socket)

sys.modules["importlib"].reload(sys.modules["socket"])
