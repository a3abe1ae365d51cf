# warden-case: d-logging-config-factory
# group: D
# technique: logging.config.dictConfig '()' factory resolves and calls subprocess.getoutput
# variant: other
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained
import logging.config

logging.config.dictConfig({
    "version": 1,
    "handlers": {"h": {"()": "subprocess.getoutput", "cmd": "id"}},
})
