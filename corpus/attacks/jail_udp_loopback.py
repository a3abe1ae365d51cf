# warden-case: jail-udp-loopback
# group: JAIL
# technique: UDP datagram to 127.0.0.1:5758
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: no-connect udp4:127.0.0.1:5758
import socket

s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.sendto(b"warden-escape udp\n", ("127.0.0.1", 5758))
