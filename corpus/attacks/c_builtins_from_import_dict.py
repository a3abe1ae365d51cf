# warden-case: c-builtins-from-import-dict
# group: C
# technique: the builtins module's namespace imported as a name (from builtins import __dict__), then exec by a computed key
# variant: import-alias
# expect-static: deny
# expect-rules: IMP101 ATTR301
# expect-jail: contained
# expect-runtime: DYN401
from builtins import __dict__ as table

table["ex" + "ec"]("import os; os.system('id')")
