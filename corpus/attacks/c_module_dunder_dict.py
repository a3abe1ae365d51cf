# warden-case: c-module-dunder-dict
# group: C
# technique: module.__dict__ lookup of a private re-export
# variant: container
# expect-static: deny
# expect-rules: ATTR301
# expect-jail: contained
import random

random.__dict__["_os"].system("id")
