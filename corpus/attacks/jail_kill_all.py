# warden-case: jail-kill-all
# group: JAIL
# technique: kill(-1, SIGKILL) signals every process the user may signal
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: host-process-survives; layer ns:pid
import os
import signal

os.kill(-1, signal.SIGKILL)
