# warden-case: j-rt2-deepcopy-reduce-system
# group: J
# technique: copy.deepcopy calls the callable an object's __reduce__ returns (os.system)
# variant: other
# expect-static: deny
# expect-rules: ATTR301 IMP101
# expect-jail: contained
# expect-runtime: PROC801
import copy
import os


class Payload:
    def __reduce__(self):
        return (os.system, ("id",))


copy.deepcopy([Payload()])
