# warden-case: g-rt3-unpickler-copyreg-extension
# group: G
# technique: a copyreg extension code (EXT1) resolved by an Unpickler subclass's own find_class
# variant: subclass
# expect-static: deny
# expect-rules: ATTR304 IMP101 REX501
# expect-jail: contained
# expect-runtime: DES804
import io
import os

import pandas

pickle = os.sys.modules["pickle"]
copyreg = os.sys.modules["copyreg"]
copyreg.add_extension("posix", "system", 0xF1)


class Loader(pickle.Unpickler):
    def find_class(self, module, name):
        return getattr(os.sys.modules[module], name)


Loader(io.BytesIO(b"\x80\x02\x82\xf1X\x11\x00\x00\x00touch /work/PWNED\x85R.")).load()
