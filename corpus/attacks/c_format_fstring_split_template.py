# warden-case: c-format-fstring-split-template
# group: C
# technique: a format template split between an f-string part and a plain string part, so neither part alone holds the dunder
# variant: other
# references: CVE-2023-41039
# expect-static: deny
# expect-rules: ATTR301
# expect-jail: env-secret-hidden
import random

template = f"{{0.__init__.__glo" "bals__[_os].environ}"
print(template.format(random.Random()))
