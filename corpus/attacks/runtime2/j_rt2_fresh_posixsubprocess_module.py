# warden-case: j-rt2-fresh-posixsubprocess-module
# group: J
# technique: a second _posixsubprocess module built with importlib.util.module_from_spec (the original fork_exec) is handed to subprocess
# variant: other
# expect-static: deny
# expect-rules: IMP101 DYN402
# expect-jail: contained
# expect-runtime: IMP101
import sys

import pandas  # noqa: F401  (loads subprocess and importlib.util)

util = sys.modules["importlib.util"]
spec = util.find_spec("_posixsubprocess")
fresh = util.module_from_spec(spec)
subprocess = sys.modules["subprocess"]
subprocess._fork_exec = fresh.fork_exec
subprocess.run(["id"])
