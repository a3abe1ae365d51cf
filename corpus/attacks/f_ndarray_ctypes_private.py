# warden-case: f-ndarray-ctypes-private
# group: F
# technique: ndarray.ctypes helper keeps the ctypes module in its private _ctypes attribute
# variant: other
# expect-static: deny
# expect-rules: REX501 ATTR302
# expect-jail: contained
import numpy as np

arr = np.zeros(4)
ct = arr.ctypes._ctypes
ct.CDLL(None).system(b"id")
