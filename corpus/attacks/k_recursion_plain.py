# warden-case: k-recursion-plain
# group: K
# technique: unbounded recursion within the default limit
# variant: plain
# expect-static: allow
# expect-rules: none
# expect-jail: status error
def depth(n):
    return depth(n + 1) + 1


print(depth(0))
