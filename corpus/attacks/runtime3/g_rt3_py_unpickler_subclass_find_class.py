# warden-case: g-rt3-py-unpickler-subclass-find-class
# group: G
# technique: a subclass of pickle's pure-Python _Unpickler whose find_class resolves globals itself
# variant: subclass
# expect-static: deny
# expect-rules: ATTR304 IMP101 REX501
# expect-jail: contained
# expect-runtime: DES804
import io
import os

import pandas

pickle = os.sys.modules["pickle"]


class Loader(pickle._Unpickler):
    def find_class(self, module, name):
        return getattr(os.sys.modules[module], name)


Loader(io.BytesIO(b"cposix\nsystem\n(S'touch /work/PWNED'\ntR.")).load()
