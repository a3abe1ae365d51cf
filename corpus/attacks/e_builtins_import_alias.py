# warden-case: e-builtins-import-alias
# group: E
# technique: from builtins import eval as evaluate
# variant: import-alias
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained
from builtins import eval as evaluate

evaluate("__import__('os').system('id')")
