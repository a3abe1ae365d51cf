# warden-case: h-cffi-dlopen
# group: H
# technique: cffi ABI mode dlopen of libc
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained
import cffi

ffi = cffi.FFI()
ffi.cdef("int system(const char *command);")
libc = ffi.dlopen(None)
libc.system(b"id")
