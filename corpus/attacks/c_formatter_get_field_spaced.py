# warden-case: c-formatter-get-field-spaced
# group: C
# technique: string.Formatter().get_field with an index key holding a space, so the field name is not read as one word
# variant: other
# references: CVE-2023-41039
# expect-static: deny
# expect-rules: ATTR301
# expect-jail: contained
# expect-runtime: PROC801
import random
import string

holder = {"a b": random.Random()}
obj, _ = string.Formatter().get_field("0[a b].__init__.__globals__[_os]", [holder], {})
obj.system("id")
