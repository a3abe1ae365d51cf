# warden-case: h-underscore-ctypes-dlopen
# group: H
# technique: the private _ctypes extension module: dlopen/dlsym
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained
import _ctypes

handle = _ctypes.dlopen("libc.so.6")
print(hex(_ctypes.dlsym(handle, "system")))
