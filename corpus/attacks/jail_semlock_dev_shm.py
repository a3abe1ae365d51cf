# warden-case: jail-semlock-dev-shm
# group: JAIL
# technique: _multiprocessing.SemLock creates a named POSIX semaphore (a file in /dev/shm, no file event); in the jail /dev/shm is the run's private /tmp, a write root gone with the run
# variant: other
# expect-static: deny
# expect-rules: IMP101
# expect-jail: no-path /dev/shm/sem.warden-escape*; no-persist
import os
import _multiprocessing

before = os.path.exists("/dev/shm/sem.warden-escape-sem")
lock = _multiprocessing.SemLock(1, 1, 1, "/warden-escape-sem", False)
print("existed before:", before, "lives in:", os.path.realpath("/dev/shm"))
