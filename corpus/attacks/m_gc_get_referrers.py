# warden-case: m-gc-get-referrers
# group: M
# technique: gc.get_referrers walks from a value to the dicts that hold it
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained
import gc
import json

for holder in gc.get_referrers(json):
    if isinstance(holder, dict) and "os" in holder:
        holder["os"].system("id")
        break
