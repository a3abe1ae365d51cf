# warden-case: m-rt3-thread-map-import-no-frame
# group: M
# technique: _thread.start_new_thread(list, (map(__import__, ...),)): an import with no Python frame
# variant: no-frame
# expect-static: deny
# expect-rules: DYN402 IMP101 REX501
# expect-jail: contained
# expect-runtime: IMP101
import os
import time

thread = os.sys.modules["_thread"]
thread.start_new_thread(list, (map(__import__, ["ftp" + "lib"]),))
time.sleep(0.3)
print("ftplib" in os.sys.modules)
