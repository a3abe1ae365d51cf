# warden-case: f-from-os-import-system-as
# group: F
# technique: from os import system as s
# variant: import-alias
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained
from os import system as summarize

summarize("id")
