# warden-case: c-getattr-map-value
# group: C
# technique: getattr passed as a value to map so no getattr call node exists
# variant: value-passing
# references: CVE-2025-5120
# expect-static: deny
# expect-rules: ATTR304
# expect-jail: contained
import random

mods = list(map(getattr, [random], ["_os"]))
mods[0].system("id")
