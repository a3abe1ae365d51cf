# warden-case: h-ctypes-from-import-alias
# group: H
# technique: from ctypes import CDLL under an alias
# variant: import-alias
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained
from ctypes import CDLL as Loader

Loader("libc.so.6").system(b"id")
