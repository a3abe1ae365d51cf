# warden-case: g-rt-marshal-from-sys-modules
# group: G
# technique: marshal taken from sys.modules through os.sys loads a code object
# variant: value-passing
# expect-static: deny
# expect-rules: IMP101 REX501
# expect-jail: contained
# expect-runtime: DES804
import os

marshal = os.sys.modules["marshal"]
code = marshal.loads(bytes.fromhex("e3"))
print(code)
