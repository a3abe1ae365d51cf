# warden-case: logging-basic-config
# group: BENIGN
# technique: logging.basicConfig and named loggers
# expect-static: allow
# expect-output: OK: processed 5 records, 1 warning
import logging

logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
log = logging.getLogger("etl")

records = [4, 8, -1, 15, 16]
warnings_seen = 0
for r in records:
    if r < 0:
        log.warning("negative value %s replaced by 0", r)
        warnings_seen += 1
    else:
        log.info("value %s ok", r)
print(f"OK: processed {len(records)} records, {warnings_seen} warning")
