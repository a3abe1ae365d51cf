# warden-case: h-rt2-map-cdll
# group: H
# technique: map(ctypes.CDLL, ...) loads libc from a builtin frame
# variant: value-passing
# expect-static: deny
# expect-rules: REX501
# expect-jail: contained
# expect-runtime: NAT803
import xgboost.core as core

libs = list(map(core.ctypes.CDLL, ["libc.so.6"]))
libs[0].system(b"id")
