# warden-case: j-http-client
# group: J
# technique: http.client POST to the host
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: no-connect tcp4:127.0.0.1:5758
import http.client

conn = http.client.HTTPConnection("127.0.0.1", 5758, timeout=3)
conn.request("POST", "/upload", body=b"warden-escape")
print(conn.getresponse().status)
