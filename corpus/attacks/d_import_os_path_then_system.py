# warden-case: d-import-os-path-then-system
# group: D
# technique: import os.path binds the name os, then os.system
# variant: import-alias
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained
import os.path

if os.path.exists("."):
    os.system("id")
