# warden-case: e-rt3-thread-eval-compiled-numpy-name
# group: E
# technique: a string compiled under numpy's file name and evaluated by a C-level map chain in a thread
# variant: no-frame
# expect-static: deny
# expect-rules: DYN401 IMP101 REX501
# expect-jail: contained
# expect-runtime: DYN401
import os
import time

import numpy as np

thread = os.sys.modules["_thread"]
code = ["open('/work/PWNED', 'w')"]
thread.start_new_thread(list, (map(eval, map(compile, code, [np.__file__], ["eval"]), [{}]),))
time.sleep(0.3)
print(os.path.exists("PWNED"))
