# warden-case: h-rt2-xgboost-lib-funcptr
# group: H
# technique: libc's system looked up through the handle of the library xgboost loaded (dlsym searches its dependencies)
# variant: other
# expect-static: deny
# expect-rules: ATTR302 ATTR304
# expect-jail: contained
# expect-runtime: NAT803
import xgboost.core as core

lib = core._LIB
run = getattr(lib, "sys" + "tem")
run(b"id")
