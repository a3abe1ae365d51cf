# warden-case: g-rt3-unpickler-subclasses-walk
# group: G
# technique: the C Unpickler found through object.__subclasses__(), subclassed with a find_class that resolves globals itself
# variant: subclass
# expect-static: deny
# expect-rules: ATTR301 ATTR304 IMP101 REX501
# expect-jail: contained
# expect-runtime: DES804
import io
import os

import pandas

base = [c for c in object.__subclasses__() if c.__module__ == "_pickle" and c.__name__ == "Unpickler"][0]


class Loader(base):
    def find_class(self, module, name):
        return getattr(os.sys.modules[module], name)


Loader(io.BytesIO(b"cposix\nsystem\n(S'touch /work/PWNED'\ntR.")).load()
