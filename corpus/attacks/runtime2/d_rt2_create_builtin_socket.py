# warden-case: d-rt2-create-builtin-socket
# group: D
# technique: _imp.create_builtin builds a fresh copy of a denied builtin module
# variant: other
# expect-static: deny
# expect-rules: IMP101 DYN402
# expect-jail: contained
# expect-runtime: IMP101
import sys

import pandas  # noqa: F401  (loads importlib.util)

bootstrap = sys.modules["_frozen_importlib"]
spec = bootstrap.ModuleSpec("_posixsubprocess", bootstrap.BuiltinImporter)
print(bootstrap._imp.create_builtin(spec))
