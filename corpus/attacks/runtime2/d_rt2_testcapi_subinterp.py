# warden-case: d-rt2-testcapi-subinterp
# group: D
# technique: _testcapi (the interpreter's test module) built by _imp.create_dynamic from its spec, then run_in_subinterp
# variant: other
# expect-static: deny
# expect-rules: IMP101 DYN402
# expect-jail: contained
# expect-runtime: IMP101
import sys

import pandas  # noqa: F401  (loads importlib.util)

util = sys.modules["importlib.util"]
spec = util.find_spec("_test" + "capi")
capi = util.module_from_spec(spec)
capi.run_in_subinterp("import os; print(os.getpid())")
