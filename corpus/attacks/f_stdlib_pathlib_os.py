# warden-case: f-stdlib-pathlib-os
# group: F
# technique: allowed stdlib module pathlib re-exports os
# variant: plain
# expect-static: deny
# expect-rules: REX501
# expect-jail: contained
import pathlib

pathlib.os.system("id")
