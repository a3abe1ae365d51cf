# warden-case: jail-kill-pid1
# group: JAIL
# technique: kill(1, SIGKILL)
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: host-process-survives; layer ns:pid
import os
import signal

os.kill(1, signal.SIGKILL)
