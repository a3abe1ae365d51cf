# warden-case: j-rt2-weakref-finalize-system
# group: J
# technique: weakref.finalize registers os.system to run when an object dies
# variant: other
# expect-static: deny
# expect-rules: IMP101 DYN402
# expect-jail: contained
# expect-runtime: PROC801
import os
import sys

import pandas  # noqa: F401  (loads weakref)

weakref = sys.modules["weakref"]


class Box:
    pass


box = Box()
weakref.finalize(box, os.system, "id")
del box
