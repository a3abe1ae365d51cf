# warden-case: jail-sethostname
# group: JAIL
# technique: change the hostname
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: host hostname unchanged
import socket

socket.sethostname("warden-escape")
print(socket.gethostname())
