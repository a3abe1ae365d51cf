# warden-case: c-format-map-walk
# group: C
# technique: str.format_map field walk to a module's globals
# variant: other
# references: CVE-2023-41039
# expect-static: deny
# expect-rules: ATTR301
# expect-jail: env-secret-hidden
import random

template = "{r.__init__.__globals__[_os].environ}"
print(template.format_map({"r": random.Random()}))
