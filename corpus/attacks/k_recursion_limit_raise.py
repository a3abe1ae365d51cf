# warden-case: k-recursion-limit-raise
# group: K
# technique: raise the recursion limit to overflow the C stack
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained; status error|memory_limit
import sys

sys.setrecursionlimit(10 ** 7)


def depth(n):
    return depth(n + 1) + 1


depth(0)
