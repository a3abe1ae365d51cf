# warden-case: f-stdlib-logging-os
# group: F
# technique: allowed stdlib module logging re-exports os
# variant: plain
# expect-static: deny
# expect-rules: REX501
# expect-jail: contained
import logging

log = logging.getLogger("job")
logging.os.system("id")
