# warden-case: jail-udp6-loopback
# group: JAIL
# technique: UDP datagram to the host's IPv6 loopback [::1]:5758
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: no-connect udp6:[::1]:5758
import socket

s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
s.sendto(b"warden-escape udp6\n", ("::1", 5758))
