# warden-case: jail-dev-kmsg-write
# group: JAIL
# technique: write to /dev/kmsg (host kernel log)
# variant: plain
# expect-static: deny
# expect-rules: FILE702
# expect-jail: contained; layer ns:mount
with open("/dev/kmsg", "w") as fh:
    fh.write("warden-escape kmsg\n")
