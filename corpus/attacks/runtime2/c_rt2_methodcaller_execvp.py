# warden-case: c-rt2-methodcaller-execvp
# group: C
# technique: operator.methodcaller with a literal member name applied to the os module
# variant: computed-string
# expect-static: deny
# expect-rules: REX501 IMP101
# expect-jail: contained
# expect-runtime: PROC801
import operator
import os

operator.methodcaller("execvp", "id", ["id"])(os)
