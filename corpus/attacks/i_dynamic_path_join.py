# warden-case: i-dynamic-path-join
# group: I
# technique: path assembled at run time (static cannot decide: only a warning)
# variant: computed-string
# expect-static: allow
# expect-rules: FILE704
# expect-jail: canary-unread; no-read /etc/shadow
parts = ["", "etc", "shadow"]
path = "/".join(parts)
with open(path) as fh:
    print(fh.read())
