# warden-case: c-shadow-getattr-empty-loop
# group: C
# technique: getattr is a loop target over an empty tuple (never bound), so the computed getattr is the builtin
# variant: other
# expect-static: deny
# expect-rules: ATTR304
# expect-jail: contained
# expect-runtime: PROC801
import random

for getattr in ():
    pass

name = "_" + "os"
getattr(random, name).system("id")
