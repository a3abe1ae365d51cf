# warden-case: e-rt2-string-template-runner
# group: E
# technique: a string built with string.Template is handed to eval via functools.partial
# variant: computed-string
# expect-static: deny
# expect-rules: DYN401
# expect-jail: contained
# expect-runtime: DYN401
import functools
import string

source = string.Template("$a + $b").substitute(a=1, b=2)
runner = functools.partial(eval, source)
print(runner())
