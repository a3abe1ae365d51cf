# warden-case: h-mmap-exec-page
# group: H
# technique: mmap an executable page and jump into it via ctypes
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained
import ctypes
import mmap

code = b"\x48\x31\xc0\xc3"
page = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
page.write(code)
addr = ctypes.addressof(ctypes.c_char.from_buffer(page))
print(ctypes.CFUNCTYPE(ctypes.c_long)(addr)())
