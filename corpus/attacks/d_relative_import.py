# warden-case: d-relative-import
# group: D
# technique: relative import of a sibling module
# variant: other
# expect-static: deny
# expect-rules: IMP103
# expect-jail: status error
from . import helpers

helpers.run()
