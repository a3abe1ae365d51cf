# warden-case: g-rt3-pandas-compat-unpickler-subclass
# group: G
# technique: pandas' pickle_compat Unpickler (found through pickle._Unpickler.__subclasses__()) subclassed with a find_class that skips pickle's
# variant: subclass
# expect-static: deny
# expect-rules: ATTR301 ATTR304 IMP101 REX501
# expect-jail: contained
# expect-runtime: DES804
import io
import os

import pandas

pickle = os.sys.modules["pickle"]
compat = [c for c in pickle._Unpickler.__subclasses__() if c.__module__.startswith("pandas")][0]


class Loader(compat):
    def find_class(self, module, name):
        return getattr(os.sys.modules[module], name)


Loader(io.BytesIO(b"cposix\nsystem\n(S'touch /work/PWNED'\ntR.")).load()
