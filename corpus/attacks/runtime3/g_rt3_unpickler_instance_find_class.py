# warden-case: g-rt3-unpickler-instance-find-class
# group: G
# technique: a __reduce__ pickle loaded by an Unpickler subclass instance given its own find_class attribute
# variant: subclass
# expect-static: deny
# expect-rules: ATTR301 ATTR304 IMP101 REX501
# expect-jail: contained
# expect-runtime: DES804
import io
import os

import pandas

pickle = os.sys.modules["pickle"]


class Payload:
    def __reduce__(self):
        return (os.system, ("touch /work/PWNED",))


class Quiet(pickle.Unpickler):
    pass


loader = Quiet(io.BytesIO(pickle.dumps(Payload())))
loader.find_class = lambda module, name: getattr(os.sys.modules[module], name)
loader.load()
