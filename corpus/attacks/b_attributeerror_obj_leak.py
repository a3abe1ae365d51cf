# warden-case: b-attributeerror-obj-leak
# group: B
# technique: AttributeError.obj hands back the module object, defeating alias tracking; then its private os
# variant: value-passing
# references: CVE-2024-47532
# expect-static: deny
# expect-rules: REX501 ATTR302
# expect-jail: contained
import random

try:
    random.no_such_helper
except AttributeError as err:
    hidden = err.obj

hidden._os.system("id")
