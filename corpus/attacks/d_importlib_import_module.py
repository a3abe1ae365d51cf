# warden-case: d-importlib-import-module
# group: D
# technique: importlib.import_module('subprocess')
# variant: plain
# expect-static: deny
# expect-rules: IMP101 DYN402
# expect-jail: contained
import importlib

sp = importlib.import_module("subprocess")
print(sp.check_output(["id"]).decode())
