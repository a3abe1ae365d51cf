# warden-case: a-rt3-semlock-subclass
# group: A
# technique: a subclass of _multiprocessing.SemLock (found through object.__subclasses__()) creating a named semaphore whose name leaves /dev/shm
# variant: subclasses
# expect-static: deny
# expect-rules: ATTR301 IMP101 REX501
# expect-jail: contained
# expect-runtime: FILE702
import os

import sklearn

os.sys.modules["multiprocessing"].context._default_context.Lock()
base = [c for c in object.__subclasses__() if c.__name__ == "SemLock"][0]


class Lock(base):
    pass


Lock(1, 1, 1, "/x/../../../usr/PWNED", False)
open("/work/PWNED", "w").close()
