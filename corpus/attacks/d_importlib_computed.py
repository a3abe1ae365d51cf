# warden-case: d-importlib-computed
# group: D
# technique: importlib.import_module with a computed module name through a from-import alias
# variant: import-alias
# expect-static: deny
# expect-rules: IMP101 DYN402
# expect-jail: contained
from importlib import import_module as load

mod = load("".join(["sub", "process"]))
mod.run(["id"])
