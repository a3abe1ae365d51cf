# warden-case: l-form-feed
# group: L
# technique: form feed at the start of a line (CPython resets the indentation column)
# variant: other
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained
def report():
    return 1
import os
os.system("id")
