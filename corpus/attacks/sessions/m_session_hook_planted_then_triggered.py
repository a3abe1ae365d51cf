# warden-case: m-session-hook-planted-then-triggered
# group: M
# technique: a session plants a __reduce__ class in one cell and deep-copies an instance in a later cell so that copy calls os.system
# variant: other
# session: cells
# expect-static: deny
# expect-rules: IMP101
# expect-runtime: PROC801
# expect-jail: contained
# %% plant
import os
class Box:
    def __reduce__(self):
        return (os.system, ("id",))
# %% trigger
import copy
copy.deepcopy(Box())
