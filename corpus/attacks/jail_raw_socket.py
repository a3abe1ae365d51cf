# warden-case: jail-raw-socket
# group: JAIL
# technique: open a raw ICMP socket
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: layer ns:net
import socket

s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
s.sendto(b"\x08\x00\xf7\xff\x00\x00\x00\x00", ("127.0.0.1", 0))
