# warden-case: a-rt3-semlock-subclasses-walk
# group: A
# technique: _multiprocessing.SemLock (loaded by multiprocessing's own Lock) found through object.__subclasses__(): a named semaphore whose name leaves /dev/shm
# variant: subclasses
# expect-static: deny
# expect-rules: ATTR301 IMP101 REX501
# expect-jail: contained
# expect-runtime: FILE702
import os

import sklearn

os.sys.modules["multiprocessing"].context._default_context.Lock()
semlock = [c for c in object.__subclasses__() if c.__name__ == "SemLock"][0]
semlock(1, 1, 1, "/x/../../../usr/PWNED", False)
open("/work/PWNED", "w").close()
