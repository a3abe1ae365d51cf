# warden-case: c-dir-scan
# group: C
# technique: scan dir(module) for a private name and fetch it with getattr
# variant: computed-string
# expect-static: deny
# expect-rules: ATTR304
# expect-jail: contained
import random

for name in dir(random):
    if name.startswith("_") and name.endswith("os"):
        getattr(random, name).system("id")
