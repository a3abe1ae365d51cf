# warden-case: j-rt2-reduce-lambda-system
# group: J
# technique: functools.reduce calls a lambda that runs os.system on the accumulated string
# variant: other
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained
# expect-runtime: PROC801
import functools
import os

functools.reduce(lambda acc, part: os.system(acc + part), ["i", "d"])
