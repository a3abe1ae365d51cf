# warden-case: d-rt2-subinterpreter-via-import-module
# group: D
# technique: Series.map with importlib.import_module loads _xxsubinterpreters (not on the denylist) from pandas' frames; a subinterpreter has its own unwrapped _imp and _posixsubprocess
# variant: value-passing
# expect-static: deny
# expect-rules: IMP101 DYN402
# expect-jail: contained
# expect-runtime: IMP101
import sys

import pandas as pd

importer = sys.modules["importlib"].import_module
interpreters = pd.Series(["_xxsub" + "interpreters"]).map(importer)[0]
child = interpreters.create()
interpreters.run_string(child, "import os; print(os.getpid())")
