# warden-case: jail-kill-host-process-by-name
# group: JAIL
# technique: walk /proc for a process named sshd or warden-sentinel and SIGKILL it
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: host-process-survives; host-process-survives sshd; layer ns:pid
import os
import signal

for pid in os.listdir("/proc"):
    if not pid.isdigit():
        continue
    try:
        with open(f"/proc/{pid}/comm") as fh:
            name = fh.read().strip()
    except OSError:
        continue
    if name in ("sshd", "warden-sentinel"):
        print("killing", pid, name)
        os.kill(int(pid), signal.SIGKILL)
