# warden-case: g-rt2-numpy-format-read-array
# group: G
# technique: numpy.lib.format.read_array with allow_pickle unpickles an object array the program wrote
# variant: other
# expect-static: deny
# expect-rules: REF201
# expect-jail: contained
# expect-runtime: DES804
import io
import numpy as np

buf = io.BytesIO()
np.lib.format.write_array(buf, np.array([{"a": 1}], dtype=object), allow_pickle=True)
buf.seek(0)
print(np.lib.format.read_array(buf, allow_pickle=True))
