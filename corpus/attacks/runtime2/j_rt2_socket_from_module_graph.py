# warden-case: j-rt2-socket-from-module-graph
# group: J
# technique: socket taken from sys.modules once pandas has loaded it, then a loopback connection
# variant: value-passing
# expect-static: deny
# expect-rules: IMP101 DYN402
# expect-jail: no-connect tcp4:127.0.0.1:5758
# expect-runtime: NET802
import sys

import pandas  # noqa: F401  (loads socket)

sock = sys.modules["socket"].create_connection(("127.0.0.1", 5758))
sock.sendall(b"warden")
