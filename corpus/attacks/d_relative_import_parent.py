# warden-case: d-relative-import-parent
# group: D
# technique: relative import from a parent package
# variant: other
# expect-static: deny
# expect-rules: IMP103
# expect-jail: status error
from ..config import secrets

print(secrets)
