# warden-case: jail-double-fork-daemon
# group: JAIL
# technique: double-fork a daemon that outlives the run
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: no-survivor
import os
import time

if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        while True:
            with open("warden-daemon-alive", "a") as fh:
                fh.write("tick\n")
            time.sleep(1)
    os._exit(0)
print("parent done")
