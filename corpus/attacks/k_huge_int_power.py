# warden-case: k-huge-int-power
# group: K
# technique: 10**10**10 big-integer power
# variant: plain
# expect-static: allow
# expect-rules: none
# expect-jail: status timeout|memory_limit
x = 10 ** 10 ** 10
print(x % 7)
