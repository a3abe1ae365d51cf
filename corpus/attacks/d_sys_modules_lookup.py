# warden-case: d-sys-modules-lookup
# group: D
# technique: sys.modules['os'] returns an already loaded module
# variant: container
# expect-static: deny
# expect-rules: IMP101 DYN402
# expect-jail: contained
import sys

sys.modules["os"].system("id")
