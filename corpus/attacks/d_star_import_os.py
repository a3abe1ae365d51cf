# warden-case: d-star-import-os
# group: D
# technique: from os import * brings system into the namespace with no qualified reference
# variant: other
# expect-static: deny
# expect-rules: IMP102
# expect-jail: contained
from os import *

system("id")
