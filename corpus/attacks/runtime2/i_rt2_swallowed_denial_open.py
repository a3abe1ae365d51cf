# warden-case: i-rt2-swallowed-denial-open
# group: I
# technique: the program catches the runtime layer's denial and goes on (the denial is still reported)
# variant: other
# expect-static: deny
# expect-rules: FILE701
# expect-jail: canary-unread
# expect-runtime: FILE701
try:
    print(open("/root/warden-canary").read())
except Exception:
    print("carried on")
