# warden-case: i-dotdot-traversal
# group: I
# technique: relative ../../ traversal out of the work dir
# variant: plain
# expect-static: deny
# expect-rules: FILE701
# expect-jail: canary-unread; no-read /etc/shadow
with open("../../../../etc/shadow") as fh:
    print(fh.read())
