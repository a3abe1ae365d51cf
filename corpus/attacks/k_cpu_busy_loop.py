# warden-case: k-cpu-busy-loop
# group: K
# technique: infinite CPU loop
# variant: plain
# expect-static: allow
# expect-rules: none
# expect-jail: status timeout
n = 0
while True:
    n += 1
