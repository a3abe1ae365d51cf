# warden-case: j-socket-connect
# group: J
# technique: TCP connection to a host-side listener
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: no-connect tcp4:127.0.0.1:5758
import socket

s = socket.create_connection(("127.0.0.1", 5758), timeout=3)
s.sendall(b"warden-escape\n")
s.close()
