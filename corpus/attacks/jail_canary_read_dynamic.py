# warden-case: jail-canary-read-dynamic
# group: JAIL
# technique: host canary read through a run-time built path
# variant: computed-string
# expect-static: allow
# expect-rules: FILE704
# expect-jail: canary-unread
segments = ["root", "warden-canary"]
path = "/" + "/".join(segments)
with open(path) as fh:
    print(fh.read())
