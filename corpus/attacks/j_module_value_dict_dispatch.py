# warden-case: j-module-value-dict-dispatch
# group: J
# technique: os stored in a dispatch dictionary and reached through a key
# variant: container
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained
# expect-runtime: PROC801
import os

tools = {"fs": os, "n": len}
tools["fs"].system("id")
