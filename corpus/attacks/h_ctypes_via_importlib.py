# warden-case: h-ctypes-via-importlib
# group: H
# technique: ctypes loaded through importlib with a computed name
# variant: computed-string
# expect-static: deny
# expect-rules: IMP101 DYN402
# expect-jail: contained
import importlib

ct = importlib.import_module("c" + "types")
ct.CDLL(None).system(b"id")
