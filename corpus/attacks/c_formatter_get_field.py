# warden-case: c-formatter-get-field
# group: C
# technique: string.Formatter().get_field resolves a dotted dunder field without any format call
# variant: other
# references: CVE-2023-41039
# expect-static: deny
# expect-rules: ATTR301
# expect-jail: contained
import random
import string

obj, _ = string.Formatter().get_field("0.__init__.__globals__[_os]", [random.Random()], {})
obj.system("id")
