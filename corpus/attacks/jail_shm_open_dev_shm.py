# warden-case: jail-shm-open-dev-shm
# group: JAIL
# technique: _posixshmem.shm_open creates a file in /dev/shm (no file event); in the jail /dev/shm is the run's private /tmp, a write root gone with the run
# variant: other
# expect-static: deny
# expect-rules: IMP101
# expect-jail: no-path /dev/shm/warden-escape*; no-persist
import os
import _posixshmem

name = "/warden-escape-shm"
before = os.path.exists("/dev/shm" + name)
fd = _posixshmem.shm_open(name, os.O_CREAT | os.O_RDWR, 0o600)
os.write(fd, b"left for the next run")
print("existed before:", before, "lives in:", os.path.realpath("/dev/shm"))
