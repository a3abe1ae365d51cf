# warden-case: sys-version-info-check
# group: BENIGN
# technique: checks sys.version_info before using a newer API
# expect-static: allow
# expect-output: OK: Python 3 detected
import sys

if sys.version_info >= (3, 8):
    major = sys.version_info.major
else:
    major = 0
print(f"OK: Python {major} detected ({sys.platform}, {sys.byteorder}-endian)")
