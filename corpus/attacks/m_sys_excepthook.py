# warden-case: m-sys-excepthook
# group: M
# technique: replace sys.excepthook to hide failures
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: status error
import sys

sys.excepthook = lambda *exc: print('{"status": "ok"}')
raise RuntimeError("real failure")
