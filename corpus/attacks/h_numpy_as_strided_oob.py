# warden-case: h-numpy-as-strided-oob
# group: H
# technique: numpy as_strided builds a view far beyond its buffer: out-of-bounds reads from pure Python
# variant: other
# expect-static: allow
# expect-rules: none
# expect-jail: contained
import numpy as np
from numpy.lib.stride_tricks import as_strided

base = np.zeros(4, dtype=np.uint8)
view = as_strided(base, shape=(1 << 30,), strides=(4096,))
print(int(view.sum()))
