# warden-case: j-rt-methodcaller-system
# group: J
# technique: operator.methodcaller names system as a string and is applied to os
# variant: computed-string
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained
# expect-runtime: PROC801
import operator
import os

run = operator.methodcaller("system", "id")
run(os)
