# warden-case: jail-tmp-state-persist
# group: JAIL
# technique: leave a file in /tmp for the next run to find
# variant: computed-string
# expect-static: allow
# expect-rules: FILE704
# expect-jail: no-persist
path = "/".join(["", "tmp", "warden-persist.txt"])
with open(path, "a") as fh:
    fh.write("seen\n")
with open(path) as fh:
    print("runs seen:", len(fh.readlines()))
