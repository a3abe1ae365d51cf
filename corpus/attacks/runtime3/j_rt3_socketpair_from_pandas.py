# warden-case: j-rt3-socketpair-from-pandas
# group: J
# technique: _socket.socketpair (loaded by pandas) raises no audit event in 3.11
# variant: loaded-module
# expect-static: deny
# expect-rules: IMP101 REX501
# expect-jail: contained
# expect-runtime: NET802
import os

import pandas

first, second = os.sys.modules["_socket"].socketpair()
first.send(b"x")
print(second.recv(1))
