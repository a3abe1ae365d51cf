# warden-case: m-rt3-thread-gcd-import-no-frame
# group: M
# technique: a thread runs importlib's _gcd_import from C: the frame walk ends inside the import system
# variant: no-frame
# expect-static: deny
# expect-rules: IMP101 REX501
# expect-jail: contained
# expect-runtime: IMP101
import os
import time

thread = os.sys.modules["_thread"]
importer = os.sys.modules["_frozen_importlib"]._gcd_import
thread.start_new_thread(list, (map(importer, ["xml.dom.minidom"]),))
time.sleep(0.3)
print("xml.dom.minidom" in os.sys.modules)
