# warden-case: c-rt2-formatter-get-field
# group: C
# technique: string.Formatter().get_field resolves a field name to os.system
# variant: computed-string
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained
# expect-runtime: PROC801
import os
import string

run, _ = string.Formatter().get_field("0.system", [os], {})
run("id")
