# warden-case: jail-signal-inotify-hoard
# group: JAIL
# technique: queue real-time signals and open inotify instances until the kernel refuses, to spend the host-wide per-user budgets charged to the user namespace's owner (root's, before issue 11)
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained; status ok; exit-code 0; layer seccomp
import ctypes
import os
import signal
import time

libc = ctypes.CDLL(None, use_errno=True)
sig = signal.SIGRTMIN
signal.pthread_sigmask(signal.SIG_BLOCK, {sig})
for _ in range(200000):
    try:
        os.kill(os.getpid(), sig)
    except PermissionError:  # seccomp refuses real-time signals by kill (issue 25)
        break
instances = 0
while instances < 100000 and libc.inotify_init1(0) >= 0:
    instances += 1
queued = [line.split()[1] for line in open("/proc/self/status") if line.startswith("SigQ")][0]
print("held", queued, "queued signals and", instances, "inotify instances")
time.sleep(2)
# The jail's ceilings are 256 signals and 8 instances: more is the host's budget being spent. Since
# issue 25 seccomp refuses both kinds of call, so the run holds none.
raise SystemExit(0 if int(queued.split("/")[0]) <= 256 and instances <= 8 else 3)
