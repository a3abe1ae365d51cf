# warden-case: a-rt3-semlock-dunder-new
# group: A
# technique: _multiprocessing.SemLock made through SemLock.__new__ for a subclass, its name leaving /dev/shm
# variant: subclasses
# expect-static: deny
# expect-rules: ATTR301 DYN404 IMP101 REX501
# expect-jail: contained
# expect-runtime: FILE702
import os

import sklearn

os.sys.modules["multiprocessing"].context._default_context.Lock()
base = [c for c in object.__subclasses__() if c.__name__ == "SemLock"][0]
Lock = type("Lock", (base,), {})
base.__new__(Lock, 1, 1, 1, "/x/../../../usr/PWNED", False)
open("/work/PWNED", "w").close()
