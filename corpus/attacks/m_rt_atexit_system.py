# warden-case: m-rt-atexit-system
# group: M
# technique: os.system registered as an exit handler through a re-export of atexit
# variant: other
# expect-static: deny
# expect-rules: DYN402 IMP101 REX501
# expect-runtime: PROC801
# expect-jail: contained
import sys
import os.path
hooks = sys.modules["atexit"] if "atexit" in sys.modules else __import__("logging").atexit
hooks.register(os.path.os.system, "id")
raise ValueError("end")
