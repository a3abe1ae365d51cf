# warden-case: k-memory-bomb-list
# group: K
# technique: append 10 MB chunks until memory runs out
# variant: plain
# expect-static: allow
# expect-rules: none
# expect-jail: status memory_limit
chunks = []
while True:
    chunks.append(bytearray(10 * 1024 * 1024))
