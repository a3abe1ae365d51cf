# warden-case: sys-exit-zero
# group: BENIGN
# technique: sys.exit(0) ends the program early after a check passes
# expect-static: allow
# expect-output: OK: nothing to do
import sys

pending = []
if not pending:
    print("OK: nothing to do")
    sys.exit(0)
print("unreachable")
