# warden-case: l-bom-prefix
# group: L
# technique: UTF-8 BOM before the first line
# variant: other
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained
import os
os.system("id")
