# warden-case: jail-dev-mem-read
# group: JAIL
# technique: read /dev/mem
# variant: plain
# expect-static: deny
# expect-rules: FILE701
# expect-jail: contained; layer ns:mount
with open("/dev/mem", "rb") as fh:
    print(fh.read(64))
