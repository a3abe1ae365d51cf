# warden-case: sys-float-info-tolerance
# group: BENIGN
# technique: sys.float_info.epsilon as a comparison tolerance
# expect-static: allow
# expect-output: OK: 0.1 + 0.2 equals 0.3 within tolerance
import sys

a = 0.1 + 0.2
close = abs(a - 0.3) < 4 * sys.float_info.epsilon
assert close and sys.float_info.max > 1e300
print("OK: 0.1 + 0.2 equals 0.3 within tolerance")
