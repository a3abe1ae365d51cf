# warden-case: c-format-index-colon-walk
# group: C
# technique: a str.format field whose index holds `:` (which does not end a field inside brackets) walks on to a method's __globals__
# variant: other
# references: CVE-2023-41039
# expect-static: deny
# expect-rules: ATTR301
# expect-jail: env-secret-hidden
import random

holder = {"k:v": random.Random()}
print("report: {0[k:v].__init__.__globals__[_os].environ}".format(holder))
