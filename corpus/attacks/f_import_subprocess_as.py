# warden-case: f-import-subprocess-as
# group: F
# technique: import subprocess under a data-sounding alias
# variant: import-alias
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained
import subprocess as stats

stats.run(["id"])
