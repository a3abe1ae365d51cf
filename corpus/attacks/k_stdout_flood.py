# warden-case: k-stdout-flood
# group: K
# technique: unbounded stdout
# variant: plain
# expect-static: allow
# expect-rules: none
# expect-jail: status output_limit
line = "A" * 4096
while True:
    print(line)
