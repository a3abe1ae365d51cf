# warden-case: d-star-import-reexport
# group: D
# technique: star import from an allowed stdlib module without __all__ (uuid) exports its os import
# variant: other
# expect-static: deny
# expect-rules: IMP102
# expect-jail: contained
from uuid import *

os.system("id")
