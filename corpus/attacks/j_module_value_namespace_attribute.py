# warden-case: j-module-value-namespace-attribute
# group: J
# technique: os stored as an attribute of a SimpleNamespace and called through it
# variant: assignment-alias
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained
# expect-runtime: PROC801
import os
import types

config = types.SimpleNamespace()
config.runner = os
config.runner.system("id")
