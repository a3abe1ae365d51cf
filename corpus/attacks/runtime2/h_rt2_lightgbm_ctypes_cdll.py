# warden-case: h-rt2-lightgbm-ctypes-cdll
# group: H
# technique: ctypes reached as lightgbm.basic.ctypes loads libc
# variant: import-alias
# expect-static: deny
# expect-rules: REX501
# expect-jail: contained
# expect-runtime: NAT803
import lightgbm.basic as basic

basic.ctypes.CDLL("libc.so.6").system(b"id")
