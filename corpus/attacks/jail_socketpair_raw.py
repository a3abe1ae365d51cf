# warden-case: jail-socketpair-raw
# group: JAIL
# technique: _socket.socketpair() raises no audit event; with processes and the network off the kernel refuses every socket, AF_UNIX included
# variant: other
# expect-static: deny
# expect-rules: IMP101
# expect-jail: status error; exit-code 1
import _socket

a, b = _socket.socketpair(_socket.AF_UNIX, _socket.SOCK_STREAM)
a.send(b"x")
print("socket pair", b.recv(1))
