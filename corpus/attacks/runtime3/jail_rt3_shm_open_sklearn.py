# warden-case: jail-rt3-shm-open-sklearn
# group: JAIL
# technique: _posixshmem.shm_open (loaded by sklearn, no audit event in 3.11) creates a file under /dev/shm
# variant: creator
# expect-static: deny
# expect-rules: TODO
# expect-jail: contained
# expect-runtime: FILE702
import os

import sklearn

shm = os.sys.modules["_posixshmem"]
fd = shm.shm_open("/warden-rt3-shm", os.O_CREAT | os.O_RDWR, 0o600)
print("made", fd)
