# warden-case: sys-exc-info-handler
# group: BENIGN
# technique: sys.exc_info in an except block to name the error
# expect-static: allow
# expect-output: OK: caught IndexError
import sys

items = [1, 2]
try:
    items[5]
except IndexError:
    kind, value, _ = sys.exc_info()
print(f"OK: caught {kind.__name__}")
