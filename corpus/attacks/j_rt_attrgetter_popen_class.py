# warden-case: j-rt-attrgetter-popen-class
# group: J
# technique: operator.attrgetter reaches os.popen from a string and calls it
# variant: computed-string
# expect-static: deny
# expect-rules: ATTR304
# expect-jail: contained
# expect-runtime: PROC801
import operator
import os

get = operator.attrgetter("pop" + "en")
print(get(os)("id").read())
