# warden-case: a-rt3-semlock-type-call
# group: A
# technique: _multiprocessing.SemLock made through type.__call__ with keywords, its name leaving /dev/shm
# variant: subclasses
# expect-static: deny
# expect-rules: ATTR301 IMP101 REX501
# expect-jail: contained
# expect-runtime: FILE702
import os

import sklearn

os.sys.modules["multiprocessing"].context._default_context.Lock()
base = [c for c in object.__subclasses__() if c.__name__ == "SemLock"][0]
type.__call__(base, 1, 1, 1, name="/x/../../../usr/PWNED", unlink=False)
open("/work/PWNED", "w").close()
