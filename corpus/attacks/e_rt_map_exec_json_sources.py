# warden-case: e-rt-map-exec-json-sources
# group: E
# technique: source decoded from JSON, exec passed to map as a value
# variant: value-passing
# expect-static: deny
# expect-rules: DYN401
# expect-runtime: DYN401
# expect-jail: contained
import json
sources = json.loads('["import os; os.system(\\"id\\")"]')
list(map(exec, sources))
