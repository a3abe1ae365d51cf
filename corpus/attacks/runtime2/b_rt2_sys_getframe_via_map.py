# warden-case: b-rt2-sys-getframe-via-map
# group: B
# technique: map over sys._getframe from a builtin frame
# variant: value-passing
# expect-static: deny
# expect-rules: IMP101 ATTR302 DYN403
# expect-jail: contained
# expect-runtime: ATTR303
import sys

frames = list(map(sys._getframe, [0]))
print(frames[0].f_globals)
