# warden-case: j-pyarrow-flight-connect
# group: J
# technique: a pyarrow Flight (gRPC) client connecting to a loopback port
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: no-connect tcp4:127.0.0.1:5758
import pyarrow.flight as flight

client = flight.connect("grpc://127.0.0.1:5758")
print(list(client.list_flights()))
