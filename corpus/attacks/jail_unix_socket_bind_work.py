# warden-case: jail-unix-socket-bind-work
# group: JAIL
# technique: bind an AF_UNIX socket to a path in the work dir (a socket file among the outputs); with processes and the network off the kernel refuses the socket
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: status error; exit-code 1; outputs-regular
import socket

s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind("/work/listener")
s.listen()
print("listening")
