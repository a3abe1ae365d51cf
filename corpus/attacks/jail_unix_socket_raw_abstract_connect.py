# warden-case: jail-unix-socket-raw-abstract-connect
# group: JAIL
# technique: the private twin _socket opens an AF_UNIX socket and connects to a host's abstract name; the kernel refuses the socket itself (and an abstract name is scoped to the jail)
# variant: other
# expect-static: deny
# expect-rules: IMP101
# expect-jail: status error; exit-code 1; no-connect unix-abstract:warden-canary
import _socket

s = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
s.connect(b"\0warden-canary")
s.send(b"warden-escape unix\n")
print("connected")
