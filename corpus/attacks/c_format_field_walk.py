# warden-case: c-format-field-walk
# group: C
# technique: str.format field walk leaks os.environ through a stdlib method's __globals__
# variant: other
# references: CVE-2023-41039
# expect-static: deny
# expect-rules: ATTR301
# expect-jail: env-secret-hidden
import random

leak = "{0.__init__.__globals__[_os].environ}".format(random.Random())
print(leak)
