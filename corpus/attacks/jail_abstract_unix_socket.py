# warden-case: jail-abstract-unix-socket
# group: JAIL
# technique: connect to an abstract Unix socket (not covered by mount namespaces)
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: no-connect unix-abstract:warden-canary
import socket

s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect("\0warden-canary")
s.sendall(b"warden-escape unix\n")
