# warden-case: jail-sethostname
# group: JAIL
# technique: change the hostname
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: hostname-unchanged; layer ns:uts
import socket

socket.sethostname("warden-escape")
print(socket.gethostname())
