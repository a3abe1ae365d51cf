# warden-case: b-rt2-vectorize-attrgetter-gi-frame
# group: B
# technique: np.vectorize over operator.attrgetter("gi_frame") reads a generator's frame from numpy's frames
# variant: value-passing
# expect-static: deny
# expect-rules: ATTR303
# expect-jail: contained
# expect-runtime: ATTR303
import operator

import numpy as np


def gen():
    yield 1


g = gen()
frames = np.vectorize(operator.attrgetter("gi_frame"), otypes=[object])(np.array([g], dtype=object))
print(frames[0].f_globals.get("__name__"))
