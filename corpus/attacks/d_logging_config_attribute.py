# warden-case: d-logging-config-attribute
# group: D
# technique: reach logging.config through the allowed logging package without importing it
# variant: other
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained
import logging

logging.config.dictConfig({
    "version": 1,
    "handlers": {"h": {"()": "os.system", "command": "id"}},
})
