# warden-case: g-shelve-open
# group: G
# technique: shelve unpickles values on access
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained
import shelve

with shelve.open("cache") as db:
    print(db.get("model"))
