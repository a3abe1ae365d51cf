# warden-case: k-disk-fill
# group: K
# technique: fill the work dir with one ever-growing file
# variant: plain
# expect-static: allow
# expect-rules: none
# expect-jail: status error
chunk = b"\0" * (1 << 20)
with open("fill.bin", "wb") as fh:
    while True:
        fh.write(chunk)
