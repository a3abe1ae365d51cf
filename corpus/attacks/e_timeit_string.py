# warden-case: e-timeit-string
# group: E
# technique: timeit.timeit executes its statement string
# variant: plain
# expect-static: deny
# expect-rules: IMP101 DYN401
# expect-jail: contained
import timeit

timeit.timeit("__import__('os').system('id')", number=1)
