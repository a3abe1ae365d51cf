# warden-case: jail-tcp-loopback
# group: JAIL
# technique: TCP to the host's loopback listener 127.0.0.1:5758
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: no-connect tcp4:127.0.0.1:5758
import socket

with socket.create_connection(("127.0.0.1", 5758), timeout=3) as s:
    s.sendall(b"warden-escape tcp\n")
