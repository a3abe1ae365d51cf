# warden-case: j-rt2-thread-target-system
# group: J
# technique: a thread whose target is os.system (threading is already loaded by pandas)
# variant: value-passing
# expect-static: deny
# expect-rules: IMP101 DYN402
# expect-jail: contained
# expect-runtime: PROC801
import os
import sys

import pandas  # noqa: F401  (loads threading)

threading = sys.modules.get("threading") or __import__("threading")
worker = threading.Thread(target=os.system, args=("id",))
worker.start()
worker.join()
