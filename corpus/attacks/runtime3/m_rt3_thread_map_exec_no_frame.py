# warden-case: m-rt3-thread-map-exec-no-frame
# group: M
# technique: _thread.start_new_thread(list, (map(exec, ...),)): exec runs with no Python frame
# variant: no-frame
# expect-static: deny
# expect-rules: DYN401 IMP101 REX501
# expect-jail: contained
# expect-runtime: DYN401
import os
import time

thread = os.sys.modules["_thread"]
thread.start_new_thread(list, (map(exec, ["open('/work/PWNED', 'w')"], [{}]),))
time.sleep(0.3)
print("exists" if os.path.exists("PWNED") else "absent")
