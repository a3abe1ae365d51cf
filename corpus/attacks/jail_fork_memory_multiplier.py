# warden-case: jail-fork-memory-multiplier
# group: JAIL
# technique: six children each hold most of the memory limit: RLIMIT_AS is per process, so without a memory cgroup the limit multiplies (4.8 GB under 1 GiB before issue 11)
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained; status memory_limit|ok|error; no-survivor
import os
import time

children = []
try:
    for _ in range(6):
        pid = os.fork()
        if pid == 0:
            block = bytearray(700 << 20)
            for i in range(0, len(block), 4096):
                block[i] = 1
            time.sleep(3)
            os._exit(0)
        children.append(pid)
except OSError as e:
    print("no more processes after", len(children), ":", type(e).__name__)
held = 0
for pid in children:
    _, status = os.waitpid(pid, 0)
    held += os.waitstatus_to_exitcode(status) == 0
print(held, "children held 700 MiB each")
raise SystemExit(3 if held >= 2 else 0)
