# warden-case: k-thread-flood
# group: K
# technique: start threads until the limit
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: no-survivor; host-process-survives
import threading
import time

while True:
    threading.Thread(target=time.sleep, args=(3600,), daemon=True).start()
