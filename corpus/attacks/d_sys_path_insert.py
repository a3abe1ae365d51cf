# warden-case: d-sys-path-insert
# group: D
# technique: prepend /tmp to sys.path and import a planted module
# variant: other
# expect-static: deny
# expect-rules: IMP101
# expect-jail: status error
import sys

sys.path.insert(0, "/tmp")
import warden_payload

warden_payload.run()
