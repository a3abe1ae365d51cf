# warden-case: k-stderr-flood
# group: K
# technique: unbounded stderr through logging
# variant: plain
# expect-static: allow
# expect-rules: none
# expect-jail: status output_limit
import logging

logging.basicConfig(level=logging.INFO)
log = logging.getLogger("flood")
while True:
    log.warning("B" * 4096)
