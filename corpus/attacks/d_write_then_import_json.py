# warden-case: d-write-then-import-json
# group: D
# technique: write json.py into the work dir, then import json to run it (shadowing an allowed module)
# variant: other
# expect-static: allow
# expect-rules: none
# expect-jail: contained
with open("json.py", "w") as fh:
    fh.write("import os\nos.system('id')\ndumps = repr\n")

import json

print(json.dumps({"status": "ok"}))
