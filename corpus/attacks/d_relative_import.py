# warden-case: d-relative-import
# group: D
# technique: relative import of a sibling module
# variant: other
# expect-static: deny
# expect-rules: IMP103
# expect-jail: no import outside the work dir
from . import helpers

helpers.run()
