# warden-case: j-rt2-atexit-register-system
# group: J
# technique: atexit (loaded by the data stack) runs os.system when the interpreter exits
# variant: other
# expect-static: deny
# expect-rules: IMP101 DYN402
# expect-jail: contained
# expect-runtime: PROC801
import os
import sys

import pandas  # noqa: F401  (loads atexit)

sys.modules["atexit"].register(os.system, "id")
print("registered")
