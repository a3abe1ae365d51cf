# warden-case: jail-ipv6-loopback
# group: JAIL
# technique: TCP to ::1
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: no-connect tcp6:[::1]:5758
import socket

s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
s.settimeout(3)
s.connect(("::1", 5758))
s.sendall(b"warden-escape ipv6\n")
