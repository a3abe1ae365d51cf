# warden-case: c-format-fstring-computed-field
# group: C
# technique: an f-string builds a format template whose attribute name is interpolated at run time
# variant: computed-string
# references: CVE-2023-41039
# expect-static: deny
# expect-rules: ATTR304
# expect-jail: env-secret-hidden
import random

name = "__glo" + "bals__"
template = f"{{0.__init__.{name}[_os].environ}}"
print(template.format(random.Random()))
